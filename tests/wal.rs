//! The write-ahead-log store: the correct store passes a seed sweep with crashes and every
//! disk fault on, each planted bug is found by sweeping seeds, and the sweep is not vacuous
//! (writes are acknowledged, crashes tear and lose writes, and disk faults fire).

use sim_core::choice::Input;
use sim_core::disk::DiskFault;
use sim_core::system::SystemSpec;
use sim_core::trace::EventKind;

fn wal() -> SystemSpec {
    systems::wal::SPEC
}

#[test]
fn the_correct_store_passes_every_seed_with_crashes_and_every_disk_fault() {
    let spec = wal();
    let opts = spec.options(None).unwrap();
    for seed in 0..300 {
        let o = spec.run(&opts, &Input::Seed(seed)).outcome;
        assert!(o.class.is_pass(), "seed {seed}: {o:?}");
    }
}

/// Every fault kind there is, network ones included: the network duplicates and delays a
/// request past later ones, and the run's own nemesis crashes and stops the node besides the
/// store's scripted crashes.
#[test]
fn the_correct_store_passes_with_every_fault_kind_on() {
    let spec = wal();
    let mut opts = spec.options(None).unwrap();
    opts.apply_faults(
        "loss,dup,reorder,partition,clog,stall,reset,silent,refuse,blackhole,\
         skew,jump,late-timer,crash,stop,pause,disk"
            .parse()
            .unwrap(),
    );
    for seed in 0..300 {
        let o = spec.run(&opts, &Input::Seed(seed)).outcome;
        assert!(o.class.is_pass(), "seed {seed}: {o:?}");
    }
    // Found by a 100,000-seed sweep with `--faults all`: a duplicated write delivered after
    // a later one was applied again, and a read went back in time. The store now fences
    // writes by request id.
    let mut opts = spec.options(None).unwrap();
    opts.apply_faults("all".parse().unwrap());
    let o = spec.run(&opts, &Input::Seed(39)).outcome;
    assert!(o.class.is_pass(), "seed 39: {o:?}");
}

fn first_failure(bug: &str, seeds: std::ops::Range<u64>) -> Option<u64> {
    let spec = wal();
    let opts = spec.options(Some(bug)).unwrap();
    seeds.into_iter().find(|&seed| {
        let o = spec.run(&opts, &Input::Seed(seed)).outcome;
        if o.class.is_failure() {
            assert_eq!(
                o.invariant.as_deref(),
                Some("acked-writes-survive"),
                "{bug}: seed {seed}: {o:?}"
            );
        }
        o.class.is_failure()
    })
}

#[test]
fn ack_before_fsync_is_found_by_a_seed_sweep() {
    assert!(first_failure("ack-before-fsync", 0..400).is_some());
}

#[test]
fn no_checksum_is_found_by_a_seed_sweep() {
    assert!(first_failure("no-checksum", 0..400).is_some());
}

#[test]
fn rename_without_dir_sync_is_found_by_a_seed_sweep() {
    assert!(first_failure("rename-without-dir-sync", 0..400).is_some());
}

#[test]
fn the_sweep_is_not_vacuous() {
    let spec = wal();
    let opts = spec.options(None).unwrap();
    let mut faults = std::collections::BTreeMap::new();
    let (mut acked, mut crashes) = (0, 0);
    for seed in 0..60 {
        let report = spec.run_traced(&opts, &Input::Seed(seed));
        for e in report.history.events() {
            match e.kind {
                EventKind::DiskFault { fault, .. } => *faults.entry(fault).or_insert(0) += 1,
                EventKind::Crash => crashes += 1,
                EventKind::OpResult { .. } if e.detail.ends_with("Some(None)") => acked += 1,
                _ => {}
            }
        }
    }
    assert!(
        acked > 300 && crashes > 30,
        "acked {acked}, crashes {crashes}"
    );
    for fault in [
        DiskFault::ReadError,
        DiskFault::WriteError,
        DiskFault::Corrupt,
        DiskFault::Misdirect,
        DiskFault::LostWrite,
        DiskFault::Slow,
        DiskFault::CrashLost,
        DiskFault::CrashTorn,
        DiskFault::CrashKept,
    ] {
        assert!(
            faults.contains_key(&fault.code()),
            "no {} in 60 runs: {faults:?}",
            fault.name()
        );
    }
}
