//! The simulated disk: one test per crash semantic, bad input as error values, faults in the
//! history, and the fault atlas.
//!
//! Each crash-semantic test sweeps seeds: a node writes, a nemesis crashes and restarts it,
//! and the restarted node reports what it finds. The tests assert what every seed must show
//! and that each allowed outcome does show up across the sweep.

use std::cell::RefCell;
use std::io::ErrorKind;
use std::rc::Rc;
use std::time::Duration;

use sim_core::disk::{
    AtlasConfig, Disk, DiskConfig, DiskError, DiskFaultProfile, DiskFaults, File,
};
use sim_core::node::{crash, restart};
use sim_core::sim::{Config, Sim};
use sim_core::time::sleep;
use sim_core::trace::{EventKind, Recording};

const SECTOR: usize = 512;

/// Runs `before` on the first start of node "db", crashes it 1 s later, restarts it, and
/// returns what `after` reports on the second start.
fn crash_once<B, BF, A, AF, T>(seed: u64, before: B, after: A) -> T
where
    B: Fn(Disk) -> BF + 'static,
    BF: std::future::Future<Output = ()> + 'static,
    A: Fn(Disk) -> AF + 'static,
    AF: std::future::Future<Output = T> + 'static,
    T: 'static,
{
    let seen: Rc<RefCell<Option<T>>> = Rc::new(RefCell::new(None));
    let mut sim = Sim::new(Config::default());
    let (before, after) = (Rc::new(before), Rc::new(after));
    let s = seen.clone();
    sim.node("db", move |ctx| {
        let (before, after, s) = (before.clone(), after.clone(), s.clone());
        async move {
            let disk = Disk::current();
            if ctx.incarnation() == 0 {
                before(disk).await;
                sleep(Duration::from_secs(3600)).await;
            } else {
                *s.borrow_mut() = Some(after(disk).await);
            }
        }
    });
    sim.client("nemesis", |_| async {
        sleep(Duration::from_secs(1)).await;
        crash("db").unwrap();
        restart("db").unwrap();
        sleep(Duration::from_secs(1)).await;
    });
    let report = sim.run_seed(seed);
    assert!(
        report.outcome.class.is_pass(),
        "seed {seed}: {:?}",
        report.outcome
    );
    let value = seen.borrow_mut().take();
    value.unwrap_or_else(|| panic!("seed {seed}: the restarted node reported nothing"))
}

/// A durable empty file called `name` (created, directory synced).
async fn durable_file(disk: &Disk, name: &str) -> File {
    let f = disk.create(name).await.unwrap();
    disk.sync_dir().await.unwrap();
    f
}

fn pattern(len: usize, salt: u8) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8 ^ salt | 1).collect()
}

/// After a crash, the file holds the synced part followed by some prefix of the unsynced
/// write: returns how many bytes of the unsynced write survived.
fn unsynced_survivor(seed: u64) -> usize {
    let synced = pattern(SECTOR, 0x10);
    let unsynced = pattern(3 * SECTOR + 100, 0x20);
    let (s, u) = (synced.clone(), unsynced.clone());
    let content = crash_once(
        seed,
        move |disk| {
            let (s, u) = (s.clone(), u.clone());
            async move {
                let f = durable_file(&disk, "log").await;
                f.append(&s).await.unwrap();
                f.sync().await.unwrap();
                f.append(&u).await.unwrap();
            }
        },
        |disk| async move { disk.open("log").await.unwrap().read_all().await.unwrap() },
    );
    assert!(
        content.len() >= synced.len() && content[..synced.len()] == synced[..],
        "seed {seed}: the synced sector must survive; file is {} bytes",
        content.len()
    );
    let rest = &content[synced.len()..];
    assert!(
        rest.len() <= unsynced.len() && rest == &unsynced[..rest.len()],
        "seed {seed}: after the synced part comes a prefix of the unsynced write, nothing else"
    );
    rest.len()
}

#[test]
fn synced_writes_survive_every_crash() {
    // `unsynced_survivor` asserts the synced sector on every seed.
    for seed in 0..100 {
        unsynced_survivor(seed);
    }
}

#[test]
fn an_unsynced_write_is_lost_on_some_crashes_and_kept_on_others() {
    let outcomes: Vec<usize> = (0..100).map(unsynced_survivor).collect();
    assert!(outcomes.contains(&0), "never lost: {outcomes:?}");
    assert!(
        outcomes.contains(&(3 * SECTOR + 100)),
        "never kept whole: {outcomes:?}"
    );
}

#[test]
fn an_unsynced_write_tears_only_at_a_sector_boundary() {
    let outcomes: Vec<usize> = (0..100).map(unsynced_survivor).collect();
    let torn: Vec<usize> = outcomes
        .iter()
        .copied()
        .filter(|&n| n != 0 && n != 3 * SECTOR + 100)
        .collect();
    assert!(!torn.is_empty(), "never torn: {outcomes:?}");
    // The write started at a sector boundary (after one synced sector): a tear keeps whole
    // sectors of it.
    for n in &torn {
        assert_eq!(n % SECTOR, 0, "torn inside a sector: {n} bytes kept");
    }
}

/// Creates "old", syncs the directory, writes and syncs "new", renames it over "old",
/// maybe syncs the directory, crashes. Returns the content found under "old".
fn after_rename(seed: u64, sync_dir: bool) -> Vec<u8> {
    crash_once(
        seed,
        move |disk| async move {
            let old = durable_file(&disk, "old").await;
            old.append(b"old").await.unwrap();
            old.sync().await.unwrap();
            let new = disk.create("new").await.unwrap();
            new.append(b"new").await.unwrap();
            new.sync().await.unwrap();
            disk.rename("new", "old").await.unwrap();
            if sync_dir {
                disk.sync_dir().await.unwrap();
            }
        },
        |disk| async move { disk.open("old").await.unwrap().read_all().await.unwrap() },
    )
}

#[test]
fn a_rename_followed_by_a_directory_sync_survives_every_crash() {
    for seed in 0..100 {
        assert_eq!(after_rename(seed, true), b"new", "seed {seed}");
    }
}

#[test]
fn a_rename_without_a_directory_sync_may_be_undone_by_a_crash() {
    let found: Vec<Vec<u8>> = (0..100).map(|seed| after_rename(seed, false)).collect();
    assert!(
        found.iter().all(|c| c == b"new" || c == b"old"),
        "{found:?}"
    );
    assert!(
        found.iter().any(|c| c == b"old"),
        "the rename always survived"
    );
    assert!(
        found.iter().any(|c| c == b"new"),
        "the rename never survived"
    );
}

#[test]
fn a_created_file_needs_a_directory_sync_to_survive() {
    let mut missing = 0;
    for seed in 0..60 {
        let exists = crash_once(
            seed,
            |disk| async move {
                let f = disk.create("f").await.unwrap();
                f.append(b"x").await.unwrap();
                f.sync().await.unwrap();
            },
            |disk| async move { disk.list().unwrap().contains(&"f".to_string()) },
        );
        missing += usize::from(!exists);
    }
    assert!(
        missing > 0 && missing < 60,
        "{missing} of 60 lost the create"
    );
}

fn kind_and_inner(e: &std::io::Error) -> (ErrorKind, DiskError) {
    let inner = e
        .get_ref()
        .and_then(|i| i.downcast_ref::<DiskError>())
        .expect("a DiskError inside")
        .clone();
    (e.kind(), inner)
}

#[test]
fn bad_input_is_an_error_value_never_a_panic() {
    let mut sim = Sim::new(Config::default());
    sim.client("c", |_| async {
        let disk = Disk::current();
        // Invalid paths.
        for bad in ["", "a/b", "..", ".", "sp ace", &"x".repeat(256)] {
            let e = disk.create(bad).await.unwrap_err();
            assert!(
                matches!(
                    kind_and_inner(&e),
                    (ErrorKind::InvalidInput, DiskError::InvalidPath(_))
                ),
                "{bad:?}: {e}"
            );
        }
        // Missing file.
        let e = disk.open("missing").await.unwrap_err();
        assert!(matches!(
            kind_and_inner(&e),
            (ErrorKind::NotFound, DiskError::NotFound(_))
        ));
        let e = disk.rename("missing", "x").await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound);
        // Create twice.
        let f = disk.create("f").await.unwrap();
        let e = disk.create("f").await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::AlreadyExists);
        // Read past the end.
        f.append(b"abc").await.unwrap();
        let e = f.read_at(2, 2).await.unwrap_err();
        assert!(matches!(
            kind_and_inner(&e),
            (
                ErrorKind::UnexpectedEof,
                DiskError::PastEnd {
                    offset: 2,
                    len: 2,
                    file_len: 3,
                    ..
                }
            )
        ));
        let e = f.read_at(u64::MAX, 2).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::UnexpectedEof, "no overflow");
        assert_eq!(f.read_at(1, 2).await.unwrap(), b"bc");
        // Closed file: every clone fails.
        let g = disk.open("f").await.unwrap();
        let g2 = g.clone();
        g.close().unwrap();
        let e = g2.append(b"x").await.unwrap_err();
        assert!(matches!(
            kind_and_inner(&e),
            (ErrorKind::InvalidInput, DiskError::Closed(_))
        ));
        assert!(g.len().is_err() && g.sync().await.is_err() && g.close().is_err());
        // Removed file.
        disk.remove("f").await.unwrap();
        let e = f.read_at(0, 1).await.unwrap_err();
        assert!(matches!(
            kind_and_inner(&e),
            (ErrorKind::NotFound, DiskError::Removed(_))
        ));
        assert_eq!(
            disk.remove("f").await.unwrap_err().kind(),
            ErrorKind::NotFound
        );
        // A file replaced by a rename is removed too.
        let a = disk.create("a").await.unwrap();
        let b = disk.create("b").await.unwrap();
        disk.rename("a", "b").await.unwrap();
        assert!(b.len().is_err(), "b was replaced");
        assert_eq!(a.len().unwrap(), 0, "a follows its file to its new name");
    });
    let report = sim.run_seed(0);
    assert!(report.outcome.class.is_pass(), "{:?}", report.outcome);
}

#[test]
fn a_handle_from_before_a_crash_is_stale() {
    let stash: Rc<RefCell<Option<File>>> = Rc::default();
    let result: Rc<RefCell<Option<ErrorKind>>> = Rc::default();
    let mut sim = Sim::new(Config::default());
    let (s, r) = (stash.clone(), result.clone());
    sim.node("db", move |ctx| {
        let (s, r) = (s.clone(), r.clone());
        async move {
            let disk = Disk::current();
            if ctx.incarnation() == 0 {
                *s.borrow_mut() = Some(disk.create("f").await.unwrap());
            } else {
                let old = s.borrow_mut().take().unwrap();
                *r.borrow_mut() = Some(old.append(b"zombie").await.unwrap_err().kind());
            }
        }
    });
    sim.client("nemesis", |_| async {
        sleep(Duration::from_millis(10)).await;
        crash("db").unwrap();
        restart("db").unwrap();
        sleep(Duration::from_millis(10)).await;
    });
    assert!(sim.run_seed(0).outcome.class.is_pass());
    assert_eq!(*result.borrow(), Some(ErrorKind::InvalidInput));
}

fn faulty_config(profile: DiskFaultProfile, damaged_copies_max: u32) -> Config {
    Config {
        recording: Recording::Full,
        disk: DiskConfig {
            faults: DiskFaults::Fixed(profile),
            atlas: AtlasConfig {
                damaged_copies_max,
                mirrors: vec![vec!["a".into(), "b".into()]],
                ..AtlasConfig::default()
            },
            ..DiskConfig::default()
        },
        ..Config::default()
    }
}

/// Writes the same 8 KiB to mirrors "a" and "b", syncs, and reads both back 20 times.
/// Returns per file and 4 KiB region whether any read differed from what was written, and
/// the fault events.
type Damage = [[bool; 2]; 2];
fn mirrored_reads(seed: u64, profile: DiskFaultProfile, max: u32) -> (Damage, Vec<String>) {
    let damaged: Rc<RefCell<Damage>> = Rc::default();
    let mut sim = Sim::new(faulty_config(profile, max));
    let d = damaged.clone();
    sim.client("c", move |_| {
        let d = d.clone();
        async move {
            let disk = Disk::current();
            let data = pattern(16 * SECTOR, 7);
            let mut files = Vec::new();
            for name in ["a", "b"] {
                let f = disk.create(name).await.unwrap();
                while f.write_at(0, &data).await.is_err() {}
                while f.sync().await.is_err() {}
                files.push(f);
            }
            for _ in 0..20 {
                for (i, f) in files.iter().enumerate() {
                    if let Ok(got) = f.read_at(0, data.len() as u64).await {
                        for region in 0..2 {
                            let r = region * 4096..(region + 1) * 4096;
                            d.borrow_mut()[i][region] |= got[r.clone()] != data[r];
                        }
                    }
                }
            }
        }
    });
    let report = sim.run_seed(seed);
    assert!(report.outcome.class.is_pass(), "{:?}", report.outcome);
    let faults = report
        .history
        .events()
        .iter()
        .filter(|e| matches!(e.kind, EventKind::DiskFault { .. }))
        .map(|e| e.detail.clone())
        .collect();
    let seen = *damaged.borrow();
    (seen, faults)
}

#[test]
fn the_fault_atlas_never_damages_both_mirrors_of_a_region() {
    let profile = DiskFaultProfile {
        corrupt_per_mille: 300,
        misdirect_per_mille: 300,
        lost_write_per_mille: 300,
        ..DiskFaultProfile::NONE
    };
    let mut one_damaged = 0;
    for seed in 0..100 {
        let (damaged, faults) = mirrored_reads(seed, profile, 1);
        // 8 KiB spans two 4 KiB regions: each may be damaged in one mirror only, so a
        // system reading both copies region by region always has a good one.
        let [a, b] = damaged;
        for (region, (a, b)) in a.iter().zip(b).enumerate() {
            assert!(
                !(a & b),
                "seed {seed}: region {region} damaged in both mirrors: {faults:?}"
            );
        }
        one_damaged += usize::from(damaged.iter().flatten().any(|&d| d));
    }
    assert!(
        one_damaged > 10,
        "damage struck only {one_damaged} of 100 runs"
    );
    // With no copies allowed (the default), nothing is ever damaged.
    for seed in 0..30 {
        let (damaged, faults) = mirrored_reads(seed, profile, 0);
        assert_eq!(damaged, Damage::default(), "seed {seed}: {faults:?}");
        assert!(faults.is_empty(), "no draws, no events: {faults:?}");
    }
}

#[test]
fn read_and_write_errors_are_transient_io_errors_in_the_history() {
    let profile = DiskFaultProfile {
        read_error_per_mille: 300,
        write_error_per_mille: 300,
        slow_per_mille: 300,
        slow_ms_max: 50,
        ..DiskFaultProfile::NONE
    };
    let kinds: Rc<RefCell<Vec<ErrorKind>>> = Rc::default();
    let mut sim = Sim::new(faulty_config(profile, 0));
    let k = kinds.clone();
    sim.client("c", move |_| {
        let k = k.clone();
        async move {
            let disk = Disk::current();
            let f = loop {
                if let Ok(f) = disk.create("f").await {
                    break f;
                }
            };
            for i in 0..20u8 {
                loop {
                    match f.append(&[i]).await {
                        Ok(_) => break,
                        Err(e) => k.borrow_mut().push(e.kind()),
                    }
                }
            }
            for i in 0..20u8 {
                loop {
                    match f.read_at(u64::from(i), 1).await {
                        Ok(b) => {
                            assert_eq!(b, [i], "a failed write wrote nothing");
                            break;
                        }
                        Err(e) => k.borrow_mut().push(e.kind()),
                    }
                }
            }
        }
    });
    let report = sim.run_seed(3);
    assert!(report.outcome.class.is_pass(), "{:?}", report.outcome);
    let kinds = kinds.borrow();
    assert!(
        !kinds.is_empty() && kinds.iter().all(|k| *k == ErrorKind::Other),
        "{kinds:?}"
    );
    let names: Vec<&str> = report
        .history
        .events()
        .iter()
        .filter(|e| matches!(e.kind, EventKind::DiskFault { .. }))
        .map(|e| e.detail.split(':').next().unwrap())
        .collect();
    for fault in ["read error", "write error", "slow"] {
        assert!(names.contains(&fault), "no {fault} in {names:?}");
    }
    let picture = sim_core::render::svg(report.history.events(), "faults");
    assert!(
        picture.contains("DISK read error"),
        "the picture shows disk faults"
    );
}

#[test]
fn disk_operations_are_in_the_history_and_runs_are_reproducible() {
    let run = |seed| {
        let mut sim = Sim::new(Config {
            recording: Recording::Full,
            ..Config::default()
        });
        sim.client("c", |_| async {
            let disk = Disk::current();
            let f = disk.create("f").await.unwrap();
            f.append(b"hello").await.unwrap();
            f.sync().await.unwrap();
        });
        sim.run_seed(seed)
    };
    let (a, b) = (run(5), run(5));
    assert_eq!(a.outcome, b.outcome);
    let ops: Vec<&str> = a
        .history
        .events()
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Disk { .. }))
        .map(|e| e.detail.split(' ').next().unwrap())
        .collect();
    assert_eq!(ops, ["create", "append", "sync"]);
    let story = sim_core::render::story(a.history.events());
    assert!(
        story.contains("disk") && story.contains("append f @0+5 ok"),
        "{story}"
    );
    let picture = sim_core::render::svg(a.history.events(), "disk");
    assert!(picture.contains("disk append f @0+5 ok"), "{picture}");
}
