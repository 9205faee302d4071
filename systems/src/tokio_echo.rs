//! Echo with retries, written in plain tokio: only the socket type comes from `sim_tokio`.
//!
//! A server answers each request on its own `tokio::spawn`ed task after a drawn moment of
//! "work" (`tokio::time::sleep`). Two clients send numbered requests over UDP and wait for
//! the reply with `tokio::select!` against a `tokio::time::sleep`; a request that times out
//! is sent again, up to a few attempts, then given up. Requests, their retries and the late
//! replies of earlier requests all travel on one socket, so a client sees stale and duplicate
//! replies. Every datagram fault is available (the run's fault profile is drawn: loss,
//! duplication, partitions, clogs), and the run's nemesis may crash and restart the server
//! (`--faults swarm:net,lifecycle`), dropping its runtime with every task in it.
//!
//! The client times each answered request with `std::time::Instant` and notes the latency in
//! the history, as plain code would log it: that read is deterministic only because this crate
//! links the OS hooks (`sim-os`); `SIM_OS_HOOKS=off sim determinism --system tokio-echo --seed 1`
//! shows the difference.
//!
//! **Invariant** `echo-is-exact`: a request the client counts as answered got its own payload
//! back.
//!
//! **Planted bug** `stale-reply-accepted`: the client takes the first reply that arrives as
//! the answer, without checking its request number, so the late reply to an earlier request
//! (timed out, or answered twice) completes a later one with the wrong payload.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use sim_core::choice::Choices;
use sim_core::net::Faults;
use sim_core::sim::{self, Sim};
use sim_core::system::{BugSpec, RunOptions, SystemSpec};
use sim_tokio::net::UdpSocket;
use sim_tokio::TokioSim;

/// The registration of this system.
pub const SPEC: SystemSpec = SystemSpec::new(
    "tokio-echo",
    "echo with retries in plain tokio (spawn, sleep, select!) on tokio nodes, datagram faults on; invariant: echo-is-exact",
    build,
)
.with_bugs(&[BugSpec {
    name: "stale-reply-accepted",
    about: "the client takes any reply as the answer, without checking its request number",
}]);

const PORT: u16 = 7;
const CLIENTS: [&str; 2] = ["c1", "c2"];
const ATTEMPTS: u32 = 3;
const WAIT: Duration = Duration::from_millis(30);

/// One finished request: what was sent and what came back as its answer (`None`: gave up).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Answered {
    /// The payload sent.
    pub sent: Vec<u8>,
    /// The payload taken as its echo.
    pub echo: Option<Vec<u8>>,
}

/// What the invariant reads.
#[derive(Debug, Default)]
pub struct Model {
    /// Every finished request, in completion order.
    pub answered: Vec<Answered>,
}

impl Model {
    /// The `echo-is-exact` invariant.
    pub fn check(&self) -> Result<(), String> {
        for a in &self.answered {
            if let Some(echo) = &a.echo {
                if *echo != a.sent {
                    return Err(format!("sent {:?}, answered with {:?}", a.sent, echo));
                }
            }
        }
        Ok(())
    }
}

fn build(opts: &RunOptions) -> Sim {
    let mut sim = Sim::new(opts.config_with_faults(Faults::Swarm));
    let model = Rc::new(RefCell::new(Model::default()));
    let buggy = opts.bug_is("stale-reply-accepted");
    sim.tokio_node("server", |_| server());
    sim.nemesis_targets(&["server"]);
    for name in CLIENTS {
        let m = model.clone();
        sim.tokio_client(name, move |_| client(m.clone(), buggy));
    }
    sim.invariant("echo-is-exact", move || model.borrow().check());
    sim
}

/// A request or reply: the request number, then the payload.
fn encode(id: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = id.to_le_bytes().to_vec();
    out.extend_from_slice(payload);
    out
}

fn decode(datagram: &[u8]) -> Option<(u32, &[u8])> {
    let id = u32::from_le_bytes(datagram.get(..4)?.try_into().ok()?);
    Some((id, &datagram[4..]))
}

async fn server() {
    let sock = Rc::new(
        UdpSocket::bind(("0.0.0.0", PORT))
            .await
            .expect("port 7 is free"),
    );
    let mut buf = [0u8; 64];
    loop {
        let Ok((n, from)) = sock.recv_from(&mut buf).await else {
            continue;
        };
        let request = buf[..n].to_vec();
        let work_ms = sim::draw(|s| s.below("tokio_echo.work_ms", 40));
        let sock = sock.clone();
        tokio::task::spawn_local(async move {
            tokio::time::sleep(Duration::from_millis(work_ms)).await;
            let _ = sock.send_to(&request, from).await;
        });
    }
}

async fn client(model: Rc<RefCell<Model>>, buggy: bool) {
    let sock = UdpSocket::bind(("0.0.0.0", PORT))
        .await
        .expect("port 7 is free");
    let count = 1 + sim::draw(|s| s.below("tokio_echo.ops", 4)) as u32;
    let mut buf = [0u8; 64];
    for id in 0..count {
        let len = 1 + sim::draw(|s| s.below("tokio_echo.len", 8)) as usize;
        let mut sent = vec![0u8; len];
        sim::draw(|s| s.fill("tokio_echo.msg", &mut sent));
        let op = sim::op_start(&sent);
        // Plain tokio code measures with std's clock; with the OS hooks linked it reads
        // virtual time inside a run, so the latency below is part of the replayable history.
        #[allow(
            clippy::disallowed_methods,
            reason = "plain tokio code as written; the OS hooks make it virtual time"
        )]
        let started = std::time::Instant::now();
        let mut echo = None;
        'attempts: for _ in 0..ATTEMPTS {
            if sock
                .send_to(&encode(id, &sent), ("server", PORT))
                .await
                .is_err()
            {
                break;
            }
            let deadline = tokio::time::sleep(WAIT);
            tokio::pin!(deadline);
            loop {
                tokio::select! {
                    got = sock.recv_from(&mut buf) => {
                        let Ok((n, _)) = got else { continue };
                        let Some((reply_id, payload)) = decode(&buf[..n]) else { continue };
                        if buggy || reply_id == id {
                            echo = Some(payload.to_vec());
                            break 'attempts;
                        }
                    }
                    _ = &mut deadline => continue 'attempts,
                }
            }
        }
        sim::op_result(op, &echo);
        if echo.is_some() {
            sim::note(&format!("request {id} answered in {:?}", started.elapsed()));
        }
        model.borrow_mut().answered.push(Answered { sent, echo });
    }
}
