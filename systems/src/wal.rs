//! A single-node key-value store with a write-ahead log on the simulated disk.
//!
//! The node `kv` keeps its map in memory and every write in a log of fixed 1 KiB slots, with a
//! snapshot of the map taken whenever the log fills. Every record and snapshot is written to
//! two mirrored files (`wal.a`/`wal.b`, `snap.a`/`snap.b`), so that the disk faults which
//! silently damage data — latent corruption, misdirected and lost writes — never leave it
//! without a good copy: the run's fault atlas damages at most one copy of any region.
//!
//! * **Write**: the record (magic, log sequence number, key, request id, value, checksum)
//!   goes to slot `lsn - base - 1` of both logs; both are synced; then the write is applied
//!   and acknowledged. Read and write errors are transient: the server retries.
//! * **Stale requests**: the network may duplicate and delay a request past later ones, so
//!   the store keeps the highest request id it has applied (in every record and snapshot, so
//!   a restart keeps it too) and acknowledges a write of an id at or below it without
//!   applying it again: the client sends one request at a time with increasing ids, so such
//!   a write is a copy of one already applied, or of one the client gave up on and has
//!   written past. (One client; several would need the highest id per client.)
//! * **Recovery** (every start): the newest valid snapshot gives `base` and the map; then
//!   slot after slot, a record valid in either log (checksum right, sequence number the one
//!   expected there) is replayed, up to the first slot valid in neither. Then the server
//!   compacts, which rewrites the recovered state to both copies before it serves anyone.
//! * **Compaction** (when the log is full, and after recovery): the map goes to
//!   `snap.X.tmp`, synced, renamed over `snap.X`, for both mirrors; the directory is synced;
//!   the log starts again at slot 0 (old slots carry old sequence numbers, so they never
//!   pass as new).
//!
//! A client writes and reads keys; a nemesis crashes and restarts the node 1 to 4 times, at
//! drawn moments.
//! Disk faults are on by default (every kind, [`DiskFaultProfile::EVERYTHING`]).
//!
//! **Invariant** `acked-writes-survive`: every read returns the last acknowledged write of
//! its key, or a write made after it whose outcome the client never learned (a timeout or an
//! error), and once a read has seen such a write, no later read goes back before it. A final
//! read of every key after the last restart checks that nothing acknowledged was lost.
//!
//! **Planted bugs**:
//! * `ack-before-fsync`: the write is acknowledged after the log writes, before the syncs;
//!   a crash in between loses an acknowledged write.
//! * `no-checksum`: recovery trusts a record whose magic and sequence number look right,
//!   without checking its checksum: a record torn by a crash (its first sector on the medium,
//!   its second not) or rotted on the medium is replayed with a wrong value.
//! * `rename-without-dir-sync`: compaction renames the new snapshots into place but does not
//!   sync the directory, then overwrites the log; a crash can undo the renames, leaving the
//!   old snapshot and a log whose records it cannot use.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use sim_core::choice::Choices;
use sim_core::disk::{AtlasConfig, Disk, DiskFaultProfile, DiskFaults, File};
use sim_core::net::{Addr, Faults, Socket};
use sim_core::node::{crash, restart};
use sim_core::sim::{self, Sim};
use sim_core::system::{BugSpec, RunOptions, SystemSpec};
use sim_core::time::{sleep, timeout};
use sim_core::trace::stable_hash_bytes;

/// The registration of this system.
pub const SPEC: SystemSpec = SystemSpec::new(
    "wal",
    "single-node KV store, mirrored write-ahead log + snapshots on the simulated disk, crashes and every disk fault on; invariant: acked-writes-survive",
    build,
)
.with_bugs(&[
    BugSpec {
        name: "ack-before-fsync",
        about: "acknowledges a write before the log is synced",
    },
    BugSpec {
        name: "no-checksum",
        about: "recovery replays a torn or rotted record without checking its checksum",
    },
    BugSpec {
        name: "rename-without-dir-sync",
        about: "compaction renames the new snapshot into place without syncing the directory",
    },
]);

const PORT: u16 = 1;
/// Bytes per log slot: two sectors, so a crash can tear a record between them.
const SLOT: u64 = 1024;
/// Slots per log file; the log is compacted when it is full.
const SLOTS: u64 = 16;
const KEYS: u64 = 8;
const RECORD_MAGIC: &[u8; 4] = b"WALR";
const SNAP_MAGIC: &[u8; 4] = b"SNAP";
const LOGS: [&str; 2] = ["wal.a", "wal.b"];
const SNAPS: [(&str, &str); 2] = [("snap.a.tmp", "snap.a"), ("snap.b.tmp", "snap.b")];
const OP_TIMEOUT: Duration = Duration::from_millis(300);

/// What the client asks.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum Op {
    /// Set `key` to `value`.
    Put {
        /// The key.
        key: u64,
        /// The value (unique per write in a run).
        value: u64,
    },
    /// Read `key`.
    Get {
        /// The key.
        key: u64,
    },
}

/// The protocol's messages.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub enum Msg {
    /// Client → server.
    Request {
        /// Request id.
        id: u64,
        /// What to do.
        op: Op,
    },
    /// Server → client: a write's acknowledgement (`None`) or a read's value.
    Reply {
        /// Request id.
        id: u64,
        /// The value read (`None` for a write, or a key never written).
        value: Option<u64>,
    },
}

/// Which planted bugs are on.
#[derive(Clone, Copy, Debug, Default)]
struct Bugs {
    ack_before_fsync: bool,
    no_checksum: bool,
    rename_without_dir_sync: bool,
}

/// What the client knows of one key.
#[derive(Debug, Default)]
struct KeyModel {
    /// The last acknowledged write, or the last write a read observed after it.
    floor: Option<u64>,
    /// Writes after `floor` whose outcome is unknown, in the order they were made.
    maybe: Vec<u64>,
}

/// The client's model of the store, and the first violation it saw.
#[derive(Debug, Default)]
pub struct Model {
    keys: BTreeMap<u64, KeyModel>,
    /// The first violation of `acked-writes-survive`.
    pub violation: Option<String>,
    /// Set when the nemesis has finished (the final reads may begin).
    nemesis_done: bool,
}

impl Model {
    fn acked(&mut self, key: u64, value: u64) {
        let k = self.keys.entry(key).or_default();
        k.floor = Some(value);
        k.maybe.clear();
    }

    fn unknown(&mut self, key: u64, value: u64) {
        self.keys.entry(key).or_default().maybe.push(value);
    }

    fn read(&mut self, key: u64, got: Option<u64>) {
        let k = self.keys.entry(key).or_default();
        if got == k.floor {
            return;
        }
        if let Some(i) = k.maybe.iter().position(|&v| Some(v) == got) {
            k.floor = got;
            k.maybe.drain(..=i);
            return;
        }
        if self.violation.is_none() {
            self.violation = Some(format!(
                "read of key {key} returned {got:?}; the last acknowledged or observed write is {:?} and writes of unknown outcome since are {:?}",
                k.floor, k.maybe
            ));
        }
    }
}

fn build(opts: &RunOptions) -> Sim {
    let mut config =
        opts.config_with_disk_faults(Faults::Off, DiskFaults::Fixed(DiskFaultProfile::EVERYTHING));
    // Every record and snapshot has two copies: one of each region may be damaged.
    config.disk.atlas = AtlasConfig {
        damaged_copies_max: 1,
        mirrors: vec![
            LOGS.iter().map(|s| s.to_string()).collect(),
            SNAPS
                .iter()
                .flat_map(|(tmp, name)| [tmp.to_string(), name.to_string()])
                .collect(),
        ],
        ..AtlasConfig::default()
    };
    // A disk whose syncs take a while (a spinning disk's 1-20 ms): the window between a
    // write reaching the cache and reaching the medium is what ack-before-fsync gambles on.
    config.disk.sync_us_min = 1_000;
    config.disk.sync_us_max = 20_000;
    let mut sim = Sim::new(config);
    let bugs = Bugs {
        ack_before_fsync: opts.bug_is("ack-before-fsync"),
        no_checksum: opts.bug_is("no-checksum"),
        rename_without_dir_sync: opts.bug_is("rename-without-dir-sync"),
    };
    let model = Rc::new(RefCell::new(Model::default()));

    sim.node("kv", move |_| server(bugs));
    let m = model.clone();
    sim.client("nemesis", move |_| nemesis(m.clone()));
    let m = model.clone();
    sim.client("client", move |_| client(m.clone()));
    sim.invariant("acked-writes-survive", move || {
        model.borrow().violation.clone().map_or(Ok(()), Err)
    });
    sim
}

// ------------------------------------------------------------------------- the workload

async fn nemesis(model: Rc<RefCell<Model>>) {
    let crashes = sim::draw(|s| s.range_inclusive("wal.crashes", 1, 4));
    for _ in 0..crashes {
        let up_ms = sim::draw(|s| s.range_inclusive("wal.up_ms", 0, 400));
        sleep(Duration::from_millis(up_ms)).await;
        // The run's lifecycle nemesis (`--faults crash,stop,...`) may have taken kv down
        // already, and will bring it back itself: this one then steps aside.
        if crash("kv").is_err() {
            continue;
        }
        let down_ms = sim::draw(|s| s.range_inclusive("wal.down_ms", 0, 100));
        sleep(Duration::from_millis(down_ms)).await;
        // Already up again only if that nemesis restarted it in between.
        let _ = restart("kv");
    }
    model.borrow_mut().nemesis_done = true;
}

/// Sends `op` and waits for its reply: `None` if none came in time.
async fn call(sock: &Socket<Msg>, id: u64, op: Op) -> Option<Option<u64>> {
    sock.send(Addr::named("kv", PORT), Msg::Request { id, op });
    timeout(OP_TIMEOUT, async {
        loop {
            if let (_, Msg::Reply { id: got, value }) = sock.recv().await {
                if got == id {
                    return value;
                }
            }
        }
    })
    .await
    .ok()
}

async fn client(model: Rc<RefCell<Model>>) {
    let sock = Socket::<Msg>::bind(PORT).expect("client port is free");
    let ops = sim::draw(|s| s.range_inclusive("wal.ops", 10, 50));
    let mut id = 0;
    for n in 0..ops {
        id += 1;
        let key = sim::draw(|s| s.below("wal.key", KEYS));
        let op = if sim::draw(|s| s.chance("wal.read", 1, 3)) {
            Op::Get { key }
        } else {
            Op::Put { key, value: n + 1 }
        };
        let mark = sim::op_start(&op);
        let reply = call(&sock, id, op).await;
        sim::op_result(mark, &reply);
        let mut m = model.borrow_mut();
        match (op, reply) {
            (Op::Put { key, value }, Some(_)) => m.acked(key, value),
            (Op::Put { key, value }, None) => m.unknown(key, value),
            (Op::Get { key }, Some(got)) => m.read(key, got),
            (Op::Get { .. }, None) => {}
        }
    }
    // After the last restart, every key must read back what was acknowledged.
    while !model.borrow().nemesis_done {
        sleep(Duration::from_millis(50)).await;
    }
    for key in 0..KEYS {
        for _ in 0..20 {
            id += 1;
            let op = Op::Get { key };
            let mark = sim::op_start(&op);
            let reply = call(&sock, id, op).await;
            sim::op_result(mark, &reply);
            if let Some(got) = reply {
                model.borrow_mut().read(key, got);
                break;
            }
        }
    }
}

// ------------------------------------------------------------------------- the server

/// Retries a disk operation until it succeeds: read and write errors are transient.
macro_rules! retry {
    ($e:expr) => {
        loop {
            match $e.await {
                Ok(v) => break v,
                Err(e) => debug_assert_eq!(e.kind(), std::io::ErrorKind::Other, "{e}"),
            }
        }
    };
}

/// A disk operation that only a bug can make fail (a name that must exist, ...).
fn must<T>(r: std::io::Result<T>, what: &str) -> T {
    r.unwrap_or_else(|e| panic!("wal: {what} failed: {e}"))
}

struct Store {
    disk: Disk,
    bugs: Bugs,
    logs: Vec<File>,
    map: BTreeMap<u64, u64>,
    /// The sequence number the snapshot covers; the log's slot `i` holds `base + 1 + i`.
    base: u64,
    /// Records in the log since the snapshot.
    used: u64,
    /// The highest request id of any write applied (see "Stale requests" above).
    applied_id: u64,
}

/// A logged write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Record {
    key: u64,
    value: u64,
    request_id: u64,
}

fn encode_record(lsn: u64, record: Record) -> Vec<u8> {
    let Record {
        key,
        value,
        request_id,
    } = record;
    let mut r = vec![0u8; SLOT as usize];
    r[0..4].copy_from_slice(RECORD_MAGIC);
    r[4..12].copy_from_slice(&lsn.to_le_bytes());
    r[12..20].copy_from_slice(&key.to_le_bytes());
    r[20..28].copy_from_slice(&request_id.to_le_bytes());
    // The value sits in the second sector: a tear between sectors separates it from the
    // header.
    r[512..520].copy_from_slice(&value.to_le_bytes());
    let sum = stable_hash_bytes(&r[..SLOT as usize - 8]);
    r[SLOT as usize - 8..].copy_from_slice(&sum.to_le_bytes());
    r
}

fn word(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

/// The record for `lsn` in `slot`, if it is valid.
fn decode_record(slot: &[u8], lsn: u64, trust_checksum_blindly: bool) -> Option<Record> {
    if slot.len() != SLOT as usize || &slot[0..4] != RECORD_MAGIC || word(slot, 4) != lsn {
        return None;
    }
    let sum = word(slot, SLOT as usize - 8);
    if !trust_checksum_blindly && sum != stable_hash_bytes(&slot[..SLOT as usize - 8]) {
        return None;
    }
    Some(Record {
        key: word(slot, 12),
        value: word(slot, 512),
        request_id: word(slot, 20),
    })
}

/// A snapshot's contents: the sequence number it covers, the highest request id applied,
/// the map.
type Snapshot = (u64, u64, BTreeMap<u64, u64>);

fn encode_snapshot(base: u64, applied_id: u64, map: &BTreeMap<u64, u64>) -> Vec<u8> {
    let mut s = Vec::new();
    s.extend_from_slice(SNAP_MAGIC);
    s.extend_from_slice(&base.to_le_bytes());
    s.extend_from_slice(&applied_id.to_le_bytes());
    s.extend_from_slice(&(map.len() as u64).to_le_bytes());
    for (k, v) in map {
        s.extend_from_slice(&k.to_le_bytes());
        s.extend_from_slice(&v.to_le_bytes());
    }
    let sum = stable_hash_bytes(&s);
    s.extend_from_slice(&sum.to_le_bytes());
    s
}

fn decode_snapshot(s: &[u8], no_checksum: bool) -> Option<Snapshot> {
    if s.len() < 36 || &s[0..4] != SNAP_MAGIC {
        return None;
    }
    let n = word(s, 20) as usize;
    if n > KEYS as usize || s.len() != 28 + 16 * n + 8 {
        return None;
    }
    let body = &s[..s.len() - 8];
    if !no_checksum && word(s, s.len() - 8) != stable_hash_bytes(body) {
        return None;
    }
    let map = (0..n)
        .map(|i| (word(s, 28 + 16 * i), word(s, 36 + 16 * i)))
        .collect();
    Some((word(s, 4), word(s, 12), map))
}

impl Store {
    async fn open(bugs: Bugs) -> Store {
        let disk = Disk::current();
        let names = must(disk.list(), "list");
        let has = |name: &str| names.iter().any(|n| n == name);
        let mut logs = Vec::new();
        if SNAPS.iter().any(|(_, snap)| has(snap)) {
            // A snapshot is written only once both logs are durably created.
            for name in LOGS {
                logs.push(must(disk.open(name).await, "open log"));
            }
        } else {
            // No snapshot: nothing was ever acknowledged. Create both logs (again),
            // preallocated, their names synced.
            for name in LOGS {
                if has(name) {
                    must(disk.remove(name).await, "remove half-made log");
                }
                let f = must(disk.create(name).await, "create log");
                retry!(f.set_len(SLOTS * SLOT));
                retry!(f.sync());
                logs.push(f);
            }
            must(disk.sync_dir().await, "sync directory");
        }
        let mut store = Store {
            disk,
            bugs,
            logs,
            map: BTreeMap::new(),
            base: 0,
            used: 0,
            applied_id: 0,
        };
        store.recover(&names).await;
        store
    }

    async fn recover(&mut self, names: &[String]) {
        // The newest valid snapshot copy.
        for (_, name) in SNAPS {
            if !names.iter().any(|n| n == name) {
                continue;
            }
            let f = must(self.disk.open(name).await, "open snapshot");
            let bytes = retry!(f.read_all());
            if let Some((base, applied_id, map)) = decode_snapshot(&bytes, self.bugs.no_checksum) {
                if base >= self.base {
                    (self.base, self.applied_id, self.map) = (base, applied_id, map);
                }
            }
        }
        // Then the log, slot by slot, from whichever copy is valid.
        let mut images = Vec::new();
        for log in &self.logs {
            images.push(retry!(log.read_all()));
        }
        let mut lsn = self.base;
        for slot in 0..SLOTS {
            let range = (slot * SLOT) as usize..((slot + 1) * SLOT) as usize;
            let record = images.iter().find_map(|image| {
                let bytes = image.get(range.clone())?;
                decode_record(bytes, lsn + 1, self.bugs.no_checksum)
            });
            let Some(record) = record else { break };
            self.map.insert(record.key, record.value);
            self.applied_id = self.applied_id.max(record.request_id);
            lsn += 1;
        }
        // Write what was recovered back to both copies before serving anyone.
        self.compact(lsn).await;
    }

    /// Snapshots the map as of `lsn` to both mirrors, and starts the log again.
    async fn compact(&mut self, lsn: u64) {
        let snapshot = encode_snapshot(lsn, self.applied_id, &self.map);
        let names = must(self.disk.list(), "list");
        for (tmp, name) in SNAPS {
            if names.iter().any(|n| n == tmp) {
                must(self.disk.remove(tmp).await, "remove old temporary snapshot");
            }
            let f = must(self.disk.create(tmp).await, "create snapshot");
            retry!(f.write_at(0, &snapshot));
            retry!(f.sync());
            must(f.close(), "close snapshot");
            must(self.disk.rename(tmp, name).await, "rename snapshot");
        }
        if !self.bugs.rename_without_dir_sync {
            must(self.disk.sync_dir().await, "sync directory");
        }
        self.base = lsn;
        self.used = 0;
    }

    /// Logs and applies a write. Returns once it is durable (or, with `ack-before-fsync`,
    /// once it is written: `ack` is called when the client may be told).
    async fn put(&mut self, record: Record, ack: impl FnOnce()) {
        let lsn = self.base + self.used + 1;
        let bytes = encode_record(lsn, record);
        for log in &self.logs {
            retry!(log.write_at(self.used * SLOT, &bytes));
        }
        self.map.insert(record.key, record.value);
        self.applied_id = self.applied_id.max(record.request_id);
        if self.bugs.ack_before_fsync {
            ack();
            for log in &self.logs {
                retry!(log.sync());
            }
        } else {
            for log in &self.logs {
                retry!(log.sync());
            }
            ack();
        }
        self.used += 1;
        if self.used == SLOTS {
            self.compact(lsn).await;
        }
    }
}

async fn server(bugs: Bugs) {
    let mut store = Store::open(bugs).await;
    let sock = Socket::<Msg>::bind(PORT).expect("server port is free");
    let acked = Cell::new(false);
    loop {
        let (from, msg) = sock.recv().await;
        let Msg::Request { id, op } = msg else {
            continue;
        };
        match op {
            Op::Put { .. } if id <= store.applied_id => {
                // A copy of a write already applied, or of one since written past.
                sock.send(from, Msg::Reply { id, value: None });
            }
            Op::Put { key, value } => {
                acked.set(false);
                let reply = || {
                    sock.send(from, Msg::Reply { id, value: None });
                    acked.set(true);
                };
                let record = Record {
                    key,
                    value,
                    request_id: id,
                };
                store.put(record, reply).await;
                debug_assert!(acked.get(), "every put is acknowledged");
            }
            Op::Get { key } => {
                let value = store.map.get(&key).copied();
                sock.send(from, Msg::Reply { id, value });
            }
        }
    }
}
