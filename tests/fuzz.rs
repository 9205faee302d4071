//! The fuzz harness (`sim_core::fuzz`): any input is valid, failures self-check, signal
//! collection changes nothing, and a nondeterministic system is reported as diverged.

use sim_core::choice::{Input, Seeded, Source};
use sim_core::fuzz::{Engine, FuzzError, Harness};
use sim_core::report::Class;
use sim_core::signal::{self, Signals};
use sim_core::system::{SpecError, SystemSpec};
use systems::fixtures::{CANARY, FLOOR, LOCK};
use systems::two_pc;

fn harness(spec: &SystemSpec, bug: Option<&str>) -> Harness {
    Harness::new(spec, bug, spec.name, Engine::Test).expect("known system and bug")
}

/// Empty, tiny, all-ones, long runs of one byte, huge, and many random buffers.
fn buffers() -> Vec<Vec<u8>> {
    let mut rng = Seeded::new(0xf022);
    let mut out = vec![
        Vec::new(),
        vec![0],
        vec![0xff],
        vec![0xff; 64],
        vec![0x80; 4096],
        vec![0xff; 100_000],
    ];
    let mut huge = vec![0u8; 1 << 20];
    rng.fill("huge", &mut huge);
    out.push(huge);
    for i in 0..300u64 {
        let len = rng.draw("len", if i % 10 == 0 { 20_000 } else { 600 }) as usize;
        let mut b = vec![0u8; len];
        rng.fill("bytes", &mut b);
        out.push(b);
    }
    out
}

#[test]
fn any_buffer_is_a_valid_input_and_correct_systems_never_fail() {
    let correct = [
        harness(&two_pc::SPEC, None),
        harness(&LOCK, None),
        harness(&FLOOR, None),
    ];
    let buggy = harness(&two_pc::SPEC, Some("first-vote-wins"));
    let mut classes = std::collections::BTreeMap::new();
    for (i, data) in buffers().iter().enumerate() {
        for h in &correct {
            let checked = h.check(data);
            assert!(
                !checked.outcome.class.is_failure(),
                "correct {} failed on buffer {i} ({} bytes): {}",
                h.spec().name,
                data.len(),
                checked.outcome.summary_line()
            );
        }
        // The buggy variant may fail, but the harness returns a verdict, never panics.
        let class = buggy.check(data).outcome.class;
        assert_ne!(class, Class::Diverged, "two-pc diverged on buffer {i}");
        *classes.entry(class).or_insert(0) += 1;
    }
    // The buffers are varied enough to reach both ends (not a hard-coded schedule: whichever
    // random buffers fail, some must, at the rate a sweep shows).
    assert!(
        classes.get(&Class::Correctness).copied().unwrap_or(0) > 0,
        "classes seen: {classes:?}"
    );
    assert!(
        classes.get(&Class::Pass).copied().unwrap_or(0) > 0,
        "classes seen: {classes:?}"
    );
}

#[test]
fn a_failure_self_checks_and_its_report_replays_through_the_cli() {
    let h = harness(&two_pc::SPEC, Some("first-vote-wins"));
    // Find a failing seed and turn it into bytes, as a saved fuzz input would be.
    let spec = two_pc::SPEC;
    let opts = h.options().clone();
    let (data, _) = (0..1000u64)
        .find_map(|seed| {
            let (report, bytes) = (spec.build)(&opts).run_encoded(&Input::Seed(seed));
            report.outcome.class.is_failure().then_some((bytes, seed))
        })
        .expect("first-vote-wins fails within 1000 seeds (a sweep shows about 2 in 3)");
    let checked = h.check(&data);
    assert_eq!(
        checked.outcome.class,
        Class::Correctness,
        "{}",
        checked.outcome.message
    );
    assert!(checked.divergence.is_none());
    assert_eq!(
        checked.trace.last().map(|e| e.kind.name()),
        Some("FAILED"),
        "trace ends at the failed check"
    );

    let report = h.failure_report(&data, &checked);
    for want in [
        "class=correctness",
        "invariant=atomicity",
        "replay: ",
        "--bug first-vote-wins --input",
        "trace (last",
        "FAILED",
    ] {
        assert!(report.contains(want), "report lacks {want:?}:\n{report}");
    }
    // Under libFuzzer the report also gives the cargo-fuzz commands that work as typed on
    // stable: with `-s none`, and with SIM_BUG (cargo-fuzz's own hints omit it).
    let libfuzzer = Harness::new(
        &systems::two_pc::SPEC,
        Some("first-vote-wins"),
        "sim_target",
        Engine::LibFuzzer,
    )
    .unwrap();
    let report = libfuzzer.failure_report(&data, &checked);
    for want in [
        "reproduce: SIM_BUG=first-vote-wins cargo fuzz run -s none sim_target fuzz/artifacts/sim_target/crash-",
        "minimize: SIM_BUG=first-vote-wins cargo fuzz tmin -s none sim_target fuzz/artifacts/sim_target/crash-",
    ] {
        assert!(report.contains(want), "report lacks {want:?}:\n{report}");
    }
    // The replay command's flags give the same run through the `sim` command line.
    let dir = std::env::temp_dir().join(format!("sim-fuzz-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("crash.bin");
    std::fs::write(&file, &data).unwrap();
    let mut out = Vec::new();
    let code = sim_core::cli::Cli::new(systems::all()).execute(
        [
            "sim",
            "run",
            "--system",
            "two-pc",
            "--bug",
            "first-vote-wins",
            "--input",
            file.to_str().unwrap(),
        ],
        &mut out,
    );
    let _ = std::fs::remove_dir_all(&dir);
    let out = String::from_utf8(out).unwrap();
    assert_eq!(code, 1, "the CLI reports the failure:\n{out}");
    assert!(
        out.contains(&format!(
            "history_hash={:016x}",
            checked.outcome.history_hash
        )),
        "same history:\n{out}"
    );
}

#[test]
fn nondeterministic_canary_is_reported_as_diverged_naming_the_event() {
    let h = harness(&CANARY, None);
    for data in [&b""[..], &[7, 7, 7][..]] {
        let checked = h.check(data);
        assert_eq!(
            checked.outcome.class,
            Class::Diverged,
            "{}",
            checked.outcome.message
        );
        let report = h.failure_report(data, &checked);
        assert!(
            report.contains("class=diverged") && report.contains("self-check: DIVERGED"),
            "{report}"
        );
        let d = checked.divergence.expect("a divergence is described");
        let (index, a, b) = d
            .first_difference
            .expect("the two recorded re-runs differ too");
        assert!(a != b, "event #{index} must differ: {a:?} vs {b:?}");
        let named = format!("first differing event is #{index}");
        assert!(
            checked.outcome.message.contains(&named),
            "{}",
            checked.outcome.message
        );
    }
}

#[test]
fn unknown_bug_is_a_start_up_error_naming_the_known_ones() {
    let err = Harness::new(
        &two_pc::SPEC,
        Some("frist-vote-wins"),
        "sim_target",
        Engine::LibFuzzer,
    )
    .unwrap_err();
    assert!(
        matches!(err, FuzzError::Bug(SpecError::UnknownBug { .. })),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains("SIM_BUG") && text.contains("first-vote-wins"),
        "{text}"
    );
}

#[test]
fn signal_collection_changes_no_run_and_sees_what_it_should() {
    // All signal checks in one test: the switches are process-wide.
    let inputs: Vec<Vec<u8>> = buffers().into_iter().take(60).collect();
    let hashes = |signals: Signals| -> Vec<(Class, u64)> {
        let h = harness(&two_pc::SPEC, Some("first-vote-wins")).with_signals(signals);
        inputs
            .iter()
            .map(|d| h.check(d))
            .map(|c| (c.outcome.class, c.outcome.history_hash))
            .collect()
    };
    let off = hashes(Signals::NONE);
    let on = hashes(Signals::ALL);
    assert_eq!(off, on, "signal collection must not change any run");

    // With edges on, a run sets edge features; with everything off, it sets none.
    Signals::NONE.install();
    signal::clear();
    harness(&LOCK, Some("opens")).check(&[1, 2, 3]);
    assert!(
        signal::snapshot().edges.is_empty(),
        "edges collected while off"
    );
    let lock = harness(&LOCK, Some("opens")).with_signals(Signals::ALL);
    signal::clear();
    lock.check(&[1, 2, 3]);
    let snap = signal::snapshot();
    assert!(
        snap.edges.len() >= 5,
        "edge features of a run: {:?}",
        snap.edges
    );
    assert!(!snap.labels.is_empty(), "the lock's cover! labels");
    assert_eq!(snap.hash.len(), 1, "one history-hash bucket per run");

    // `reject`: a repeated history is rejected, a new one kept.
    let fresh = harness(&LOCK, None).with_signals(Signals::parse("reject").unwrap());
    let first = fresh.check(&[9, 9]);
    let again = fresh.check(&[9, 9]);
    assert!(first.new_history && !again.new_history);

    // Abstract states (raft-kv names each replica's): features only, never a change of run,
    // and each first hit carries the draw clock it happened at, in order.
    let raft_inputs: Vec<Vec<u8>> = (0..8u64).map(recorded_raft_seed).collect();
    let raft_hashes = |signals: Signals| -> Vec<u64> {
        let h = harness(&systems::raft_kv::SPEC, None).with_signals(signals);
        raft_inputs
            .iter()
            .map(|d| h.check(d).outcome.history_hash)
            .collect()
    };
    assert_eq!(raft_hashes(Signals::NONE), raft_hashes(Signals::ALL));
    Signals::parse("labels").unwrap().install();
    signal::clear();
    signal::begin_run();
    harness(&systems::raft_kv::SPEC, None).check(&raft_inputs[0]);
    // `check` hands the first hits to the mutator; run again to read them here.
    signal::clear();
    signal::begin_run();
    let report = (systems::raft_kv::SPEC.build)(&systems::raft_kv::SPEC.options(None).unwrap())
        .run_input(&sim_core::choice::Input::Bytes(raft_inputs[0].clone()));
    let hits = signal::take_first_hits();
    assert!(report.outcome.class.is_pass());
    assert!(
        hits.len() >= 3,
        "a raft-kv run reaches several abstract states: {hits:?}"
    );
    assert!(
        hits.windows(2).all(|w| w[0].1 <= w[1].1),
        "first hits in clock order: {hits:?}"
    );
    Signals::NONE.install();
}

/// Seed `seed`'s raft-kv run, written as the byte input that replays it.
fn recorded_raft_seed(seed: u64) -> Vec<u8> {
    let recorder = sim_core::choice::Recorder::new(sim_core::choice::Seeded::new(seed));
    let log = recorder.log();
    (systems::raft_kv::SPEC.build)(&systems::raft_kv::SPEC.options(None).unwrap())
        .run(Box::new(recorder));
    let bytes = sim_core::choice::encode(&log.borrow().draws);
    bytes
}
