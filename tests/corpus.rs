//! Replays every checked-in corpus entry (`corpus/TARGET/NAME.bin` with `NAME.json`) on
//! stable Rust and checks it still ends in its pinned class, invariant and history hash, so
//! every bug a fuzzer ever found stays a regression test.
//!
//! A changed hash means the run changed: if the change to the system (or framework) was
//! deliberate, re-pin with `scripts/corpus-add.sh`; if not, the replay printed below shows
//! what differs.

use std::path::{Path, PathBuf};

use sim_core::fuzz::{CorpusMeta, Engine, Harness};
use sim_core::system::{self, SystemSpec};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("corpus")
}

fn entries() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut targets: Vec<_> = std::fs::read_dir(corpus_dir())
        .expect("corpus/ exists")
        .flatten()
        .filter(|e| e.path().is_dir())
        .collect();
    targets.sort_by_key(|e| e.file_name());
    for target in targets {
        let name = target.file_name().to_string_lossy().into_owned();
        let mut bins: Vec<PathBuf> = std::fs::read_dir(target.path())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "bin"))
            .collect();
        bins.sort();
        out.extend(bins.into_iter().map(|p| (name.clone(), p)));
    }
    out
}

#[test]
fn every_corpus_entry_replays_to_its_pinned_class_and_hash() {
    let specs: Vec<SystemSpec> = systems::all()
        .into_iter()
        .chain(systems::fixtures::all())
        .collect();
    let entries = entries();
    assert!(
        entries.len() >= 4,
        "the corpus holds seed and regression inputs; found {}",
        entries.len()
    );
    let mut failures = Vec::new();
    let mut found_bugs = 0;
    for (target, bin) in &entries {
        let meta_path = bin.with_extension("json");
        let meta_text = std::fs::read_to_string(&meta_path)
            .unwrap_or_else(|e| panic!("{} has no metadata file: {e}", bin.display()));
        let meta: CorpusMeta = serde_json::from_str(&meta_text)
            .unwrap_or_else(|e| panic!("{}: bad metadata: {e}", meta_path.display()));
        assert_eq!(
            &meta.target,
            target,
            "{} is filed under the wrong target",
            meta_path.display()
        );
        let spec = system::find(&specs, &meta.system)
            .unwrap_or_else(|e| panic!("{}: {e}", meta_path.display()));
        let harness = Harness::new(spec, meta.bug.as_deref(), target, Engine::Test)
            .unwrap_or_else(|e| panic!("{}: {e}", meta_path.display()));
        if meta.encoding != sim_core::choice::ENCODING {
            failures.push(format!(
                "{}: its input is in byte encoding {}, this build reads {}: convert it (replay it in its encoding and re-encode the draws, as tests/examples/corpus_convert.rs did for the flat encoding); re-pinning it would pin another run",
                bin.display(),
                meta.encoding,
                sim_core::choice::ENCODING
            ));
            continue;
        }
        let data = std::fs::read(bin).unwrap();
        let checked = harness.check(&data);
        let got = harness.metadata(&checked);
        found_bugs += usize::from(meta.class.is_failure());
        if got != meta {
            let bug = meta
                .bug
                .as_deref()
                .map_or(String::new(), |b| format!(" --bug {b}"));
            failures.push(format!(
                "{}:\n  pinned {}\n  got    {}\n  replay: cargo run -p systems --bin sim -- run --system {}{bug} --input {}",
                bin.display(),
                serde_json::to_string(&meta).unwrap(),
                serde_json::to_string(&got).unwrap(),
                meta.system,
                bin.display()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} corpus entries changed:\n{}",
        failures.len(),
        entries.len(),
        failures.join("\n")
    );
    assert!(
        found_bugs > 0,
        "the corpus keeps the inputs that found bugs; none found"
    );
}
