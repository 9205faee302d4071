//! A primary-backup register, written against sim-core as any system of yours would be.
//!
//! A client writes values to the primary over RPC (`sim_core::net::rpc`). The primary
//! forwards each write to the backup and answers the client once the backup has it, so
//! every write the client saw acknowledged survives the loss of the primary.
//!
//! **Invariant** `acked-writes-are-on-the-backup`: every value the client saw acknowledged is
//! on the backup.
//!
//! **Planted bug** `ack-before-replicate`: the primary answers the client first and forwards
//! afterwards; when the reply outruns the forward, an acknowledged write is on the primary
//! alone.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;
use std::time::Duration;

use sim_core::choice::Choices;
use sim_core::net::rpc::{RpcClient, RpcServer};
use sim_core::net::{Addr, Faults};
use sim_core::sim::{self, Sim};
use sim_core::system::{BugSpec, RunOptions, SystemSpec};

/// The registration the `sim` binary, the tests and the fuzz target share.
pub const SPEC: SystemSpec = SystemSpec::new(
    "register",
    "primary-backup register over RPC; invariant: acked-writes-are-on-the-backup",
    build,
)
.with_bugs(&[BugSpec {
    name: "ack-before-replicate",
    about: "the primary acknowledges a write before the backup has it",
}]);

const CLIENT_PORT: u16 = 1;
const PRIMARY_PORT: u16 = 2;
const BACKUP_PORT: u16 = 3;
const FORWARD_PORT: u16 = 4;
const TIMEOUT: Duration = Duration::from_millis(200);

/// What the invariant reads: written by the client and the backup, read out of band.
#[derive(Debug, Default)]
pub struct Model {
    /// Values the client saw acknowledged.
    pub acked: BTreeSet<u64>,
    /// Values the backup holds.
    pub on_backup: BTreeSet<u64>,
}

impl Model {
    /// The invariant.
    pub fn check(&self) -> Result<(), String> {
        match self.acked.difference(&self.on_backup).next() {
            Some(lost) => Err(format!(
                "value {lost} was acknowledged but the backup does not have it"
            )),
            None => Ok(()),
        }
    }
}

fn build(opts: &RunOptions) -> Sim {
    // Loss, duplication, reordering, partitions and clogs, as the input draws them.
    let mut sim = Sim::new(opts.config_with_faults(Faults::Swarm));
    let model = Rc::new(RefCell::new(Model::default()));
    let ack_early = opts.bug_is("ack-before-replicate");
    let m = model.clone();
    sim.node("backup", move |_| backup(m.clone()));
    sim.node("primary", move |_| primary(ack_early));
    let m = model.clone();
    sim.client("client", move |_| client(m.clone()));
    sim.invariant("acked-writes-are-on-the-backup", move || {
        model.borrow().check()
    });
    sim
}

async fn backup(model: Rc<RefCell<Model>>) {
    let server = RpcServer::<u64, ()>::bind(BACKUP_PORT).expect("port free");
    loop {
        let request = server.recv().await;
        // Idempotent: a duplicated or retried forward changes nothing.
        model.borrow_mut().on_backup.insert(request.body);
        server.reply(&request, ());
    }
}

async fn primary(ack_early: bool) {
    let server = RpcServer::<u64, bool>::bind(PRIMARY_PORT).expect("port free");
    let backup = RpcClient::<u64, ()>::bind(FORWARD_PORT).expect("port free");
    let to_backup = Addr::named("backup", BACKUP_PORT);
    loop {
        let request = server.recv().await;
        if ack_early {
            server.reply(&request, true);
        }
        let replicated = backup.call(to_backup, request.body, TIMEOUT).await.is_ok();
        if !ack_early {
            // A write the backup may not have is not acknowledged.
            server.reply(&request, replicated);
        }
    }
}

async fn client(model: Rc<RefCell<Model>>) {
    let primary = RpcClient::<u64, bool>::bind(CLIENT_PORT).expect("port free");
    let to_primary = Addr::named("primary", PRIMARY_PORT);
    let writes = 1 + sim::draw(|s| s.below("register.writes", 5));
    for value in 0..writes {
        if let Ok(true) = primary.call(to_primary, value, TIMEOUT * 3).await {
            model.borrow_mut().acked.insert(value);
        }
    }
}
