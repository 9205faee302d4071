//! Echo over streams: clients send a message, half-close, and read the echo to EOF.
//!
//! Two servers, `s1` and `s2`, stand behind the routed name `echo`; every connection picks
//! one (drawn from the input), and the route shrinks to `s2` alone at a drawn instant. A
//! server handles each connection with two tasks: a reader that passes the chunks it reads
//! to a writer, and the writer, which "works" on each chunk for a drawn moment and writes it
//! back. When the reader sees EOF — the client's half-close — it stops; the writer finishes
//! the chunks it has, then closes. A nemesis may crash and restart `s1`.
//!
//! Every network fault is available: the run's fault profile is drawn (swarm), so partitions,
//! clogs, stalls, resets, silent peers and refused or black-holed connects each come and go
//! across a sweep. The client treats any I/O error or timeout as a legitimate outcome.
//!
//! **Invariant** `echo-is-exact`: an exchange that ends in a clean EOF returned exactly the
//! bytes sent. (A fault may make an exchange fail; it may never make it *succeed wrongly*.)
//!
//! **Planted bug** `half-close-drops-reply`: the server treats the client's half-close as a
//! full close — once the reader has seen EOF, the writer thinks nobody is listening and drops
//! the replies it has not written yet, then closes cleanly. The client reads a short echo and
//! a clean EOF. Only a stream with TCP's half-close shows the difference: where EOF meant the
//! peer was gone, the correct server could not reply either.

use std::cell::{Cell, RefCell};
use std::io;
use std::rc::Rc;
use std::time::Duration;

use futures::channel::mpsc;
use futures::io::{AsyncReadExt, AsyncWriteExt};
use futures::StreamExt;
use sim_core::choice::{Choices, Source};
use sim_core::net::{self, Control, Faults, Listener, Stream};
use sim_core::node::{crash, restart};
use sim_core::sim::{self, Sim};
use sim_core::system::{BugSpec, RunOptions, SystemSpec};
use sim_core::time::{sleep, timeout, Instant};

/// The registration of this system.
pub const SPEC: SystemSpec = SystemSpec::new(
    "echo",
    "echo over streams, two servers behind a routed name, every network fault on; invariant: echo-is-exact",
    build,
)
.with_bugs(&[BugSpec {
    name: "half-close-drops-reply",
    about: "the server treats the client's half-close as a full close and drops unwritten replies",
}]);

const PORT: u16 = 7;
const CLIENTS: [&str; 2] = ["c1", "c2"];
const OP_TIMEOUT: Duration = Duration::from_secs(3);

/// One finished exchange: what was sent, and what came back (or which error).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Exchange {
    /// The message.
    pub sent: Vec<u8>,
    /// The echo read to a clean EOF, or the error kind / timeout.
    pub result: Result<Vec<u8>, String>,
}

/// What the checks read.
#[derive(Debug, Default)]
pub struct Model {
    /// Every finished exchange, in completion order.
    pub exchanges: Vec<Exchange>,
}

impl Model {
    /// The `echo-is-exact` invariant.
    pub fn check(&self) -> Result<(), String> {
        for e in &self.exchanges {
            if let Ok(reply) = &e.result {
                if *reply != e.sent {
                    return Err(format!(
                        "sent {} bytes {:?}, but a clean EOF came after {} bytes {:?}",
                        e.sent.len(),
                        e.sent,
                        reply.len(),
                        reply
                    ));
                }
            }
        }
        Ok(())
    }
}

fn build(opts: &RunOptions) -> Sim {
    // Every network fault is on unless the run says otherwise (`--faults`).
    let mut sim = Sim::new(opts.config_with_faults(Faults::Swarm));
    let model = Rc::new(RefCell::new(Model::default()));
    let buggy = opts.bug_is("half-close-drops-reply");

    sim.setup(|source: &mut dyn Source| {
        net::route("echo", &["s1", "s2"]).expect("both servers exist");
        let ms = source.range_inclusive("echo.reroute_ms", 0, 2_000);
        let to_s2 = Control::Route {
            name: "echo".into(),
            to: vec!["s2".into()],
        };
        net::at(Instant::from_nanos(ms * 1_000_000), to_s2).expect("s2 exists");
    });
    for name in ["s1", "s2"] {
        sim.node(name, move |_| server(buggy));
    }
    sim.node("nemesis", |ctx| async move {
        if ctx.incarnation() > 0 || !sim::draw(|s| s.chance("echo.crash", 1, 2)) {
            return;
        }
        let at_ms = sim::draw(|s| s.range_inclusive("echo.crash_at_ms", 0, 500));
        sleep(Duration::from_millis(at_ms)).await;
        // With lifecycle faults on (`--faults swarm:net,lifecycle`) the run's nemesis may
        // hold s1 down already: then this scripted crash (and its restart) does not happen.
        if crash("s1").is_err() {
            return;
        }
        let down_ms = sim::draw(|s| s.range_inclusive("echo.down_ms", 0, 500));
        sleep(Duration::from_millis(down_ms)).await;
        let _ = restart("s1");
    });
    // The run's own nemesis (lifecycle faults, off unless asked for) acts on the servers.
    sim.nemesis_targets(&["s1", "s2"]);
    for name in CLIENTS {
        let m = model.clone();
        sim.client(name, move |_| client(m.clone()));
    }
    let m = model;
    sim.invariant("echo-is-exact", move || m.borrow().check());
    sim
}

async fn client(model: Rc<RefCell<Model>>) {
    let count = 1 + sim::draw(|s| s.below("echo.ops", 3));
    for _ in 0..count {
        let len = 1 + sim::draw(|s| s.below("echo.len", 32)) as usize;
        let mut sent = vec![0u8; len];
        sim::draw(|s| s.fill("echo.msg", &mut sent));
        let op = sim::op_start(&sent);
        let result = match timeout(OP_TIMEOUT, exchange(&sent)).await {
            Ok(Ok(reply)) => Ok(reply),
            Ok(Err(e)) => Err(format!("{:?}", e.kind())),
            Err(_) => Err("timed out".to_string()),
        };
        sim::op_result(op, &result);
        model.borrow_mut().exchanges.push(Exchange { sent, result });
    }
}

/// One exchange: connect, send the message in a few writes, half-close, read to EOF.
async fn exchange(msg: &[u8]) -> io::Result<Vec<u8>> {
    let mut stream = Stream::connect("echo", PORT).await?;
    let pieces = 1 + sim::draw(|s| s.below("echo.pieces", 3)) as usize;
    for chunk in msg.chunks(msg.len().div_ceil(pieces)) {
        stream.write_all(chunk).await?;
        let pause_ms = sim::draw(|s| s.below("echo.pause_ms", 3));
        sleep(Duration::from_millis(pause_ms)).await;
    }
    stream.close().await?;
    let mut reply = Vec::new();
    stream.read_to_end(&mut reply).await?;
    Ok(reply)
}

async fn server(buggy: bool) {
    let listener = Listener::bind(PORT).expect("the echo port is free");
    while let Ok((stream, _)) = listener.accept().await {
        sim_core::rt::spawn(handle(stream, buggy));
    }
}

async fn handle(stream: Stream, buggy: bool) {
    let stream = Rc::new(stream);
    let half_closed = Rc::new(Cell::new(false));
    let (chunks_tx, mut chunks_rx) = mpsc::unbounded::<Vec<u8>>();
    let writer = {
        let stream = stream.clone();
        let half_closed = half_closed.clone();
        sim_core::rt::spawn(async move {
            while let Some(chunk) = chunks_rx.next().await {
                let work_ms = sim::draw(|s| s.below("echo.work_ms", 3));
                sleep(Duration::from_millis(work_ms)).await;
                if buggy && half_closed.get() {
                    // Planted bug: "the client closed, nobody will read this".
                    return;
                }
                if (&*stream).write_all(&chunk).await.is_err() {
                    return;
                }
            }
            let _ = (&*stream).close().await;
        })
    };
    let mut buf = [0u8; 16];
    loop {
        match (&*stream).read(&mut buf).await {
            Ok(0) => {
                half_closed.set(true);
                break;
            }
            Ok(n) => {
                if chunks_tx.unbounded_send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    drop(chunks_tx);
    let _ = writer.await;
}
