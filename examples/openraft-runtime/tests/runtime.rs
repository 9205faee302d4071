//! The adapter used the way openraft uses its runtime — generic code over `AsyncRuntime` —
//! inside a simulation: election-style randomized timeouts, spawned tasks, oneshot replies.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use openraft::async_runtime::AsyncOneshotSendExt;
use openraft::{AsyncRuntime, Instant as _};
use openraft_runtime::SimRuntime;
use rand::Rng;
use sim_core::sim::{Config, Sim};

/// Written against the trait only, as a Raft implementation is: a randomized election
/// timeout, a spawned "RPC" answering through a oneshot, a timeout on the reply.
async fn election_round<RT: AsyncRuntime>(log: Rc<RefCell<Vec<String>>>) {
    let started = RT::Instant::now();
    let timeout_ms = RT::thread_rng().gen_range(150..300u64);
    RT::sleep(Duration::from_millis(timeout_ms)).await;
    let (tx, rx) = RT::oneshot::<u64>();
    let vote_latency_ms = RT::thread_rng().gen_range(1..100u64);
    let voter = RT::spawn(async move {
        RT::sleep(Duration::from_millis(vote_latency_ms)).await;
        let _ = tx.send(7);
    });
    let deadline = RT::Instant::now() + Duration::from_millis(50);
    let vote = RT::timeout_at(deadline, rx).await;
    let _ = voter.await;
    log.borrow_mut().push(format!(
        "timeout {timeout_ms}ms, vote {:?}, elapsed {:?}",
        vote.map(|r| r.ok()),
        started.elapsed()
    ));
}

fn run(seed: u64) -> (u64, Vec<String>) {
    let log = Rc::new(RefCell::new(Vec::new()));
    let mut sim = Sim::new(Config::default());
    let l = log.clone();
    sim.client("node", move |_| {
        let l = l.clone();
        async move {
            for _ in 0..3 {
                election_round::<SimRuntime>(l.clone()).await;
                sim_core::sim::note(l.borrow().last().unwrap());
            }
        }
    });
    let report = sim.run_seed(seed);
    assert!(report.outcome.class.is_pass(), "{:?}", report.outcome);
    let lines = log.borrow().clone();
    (report.outcome.history_hash, lines)
}

#[test]
fn generic_raft_style_code_runs_on_virtual_time_and_replays() {
    for seed in 0..200 {
        let (hash, lines) = run(seed);
        assert_eq!(run(seed).0, hash, "seed {seed} replays");
        assert_eq!(lines.len(), 3);
    }
    // The draws come from the input: seeds differ.
    let distinct: std::collections::BTreeSet<_> = (0..50).map(|s| run(s).1).collect();
    assert!(distinct.len() > 40, "only {} distinct runs", distinct.len());
    // Virtual time: a vote slower than 50 ms times out, a faster one arrives.
    let all: Vec<String> = (0..50).flat_map(|s| run(s).1).collect();
    assert!(all.iter().any(|l| l.contains("vote Err")));
    assert!(all.iter().any(|l| l.contains("vote Ok(Some(7))")));
}
