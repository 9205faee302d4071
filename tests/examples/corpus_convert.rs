//! Converts corpus entries written in the flat byte encoding (before lanes) to the lane
//! encoding, keeping each entry's run: the old bytes are replayed under
//! [`sim_core::choice::FlatBytes`] through a recorder and the draws re-encoded, so the new
//! bytes make the same draws and give the same history hash.
//!
//! `cargo run --release -p acceptance --example corpus_convert -- corpus/TARGET/NAME.bin ...`
//!
//! Each file is rewritten in place; its metadata is checked against the converted run and the
//! tool stops (exit 1) on the first entry whose class or hash would change.

use sim_core::choice::Input;
use sim_core::fuzz::{CorpusMeta, Engine, Harness};
use sim_core::run_spec::{RunFlags, RunSpec, Variant};
use sim_core::system;

fn fail(code: i32, message: impl std::fmt::Display) -> ! {
    eprintln!("error: {message}");
    std::process::exit(code)
}

fn main() {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        fail(2, "usage: corpus_convert corpus/TARGET/NAME.bin ...");
    }
    let specs: Vec<_> = systems::all()
        .into_iter()
        .chain(systems::fixtures::all())
        .collect();
    for file in &files {
        let meta_path = std::path::Path::new(file).with_extension("json");
        let text = std::fs::read_to_string(&meta_path)
            .unwrap_or_else(|e| fail(2, format!("cannot read {}: {e}", meta_path.display())));
        let meta: CorpusMeta = serde_json::from_str(&text)
            .unwrap_or_else(|e| fail(2, format!("{}: bad metadata: {e}", meta_path.display())));
        let spec = system::find(&specs, &meta.system).unwrap_or_else(|e| fail(2, e));
        let old = std::fs::read(file).unwrap_or_else(|e| fail(2, format!("{file}: {e}")));
        let variant = Variant::new(spec, meta.bug.as_deref(), RunFlags::default())
            .unwrap_or_else(|e| fail(2, e));
        let Input::Bytes(new) = RunSpec::new(variant, Input::FlatBytes(old.clone())).input else {
            unreachable!("RunSpec::new converts flat bytes")
        };
        let harness = Harness::new(spec, meta.bug.as_deref(), &meta.target, Engine::Test)
            .unwrap_or_else(|e| fail(2, e));
        let got = harness.metadata(&harness.check(&new));
        if got != meta {
            fail(
                1,
                format!("{file}: the converted run differs: {got:?} vs pinned {meta:?}"),
            );
        }
        std::fs::write(file, &new).unwrap_or_else(|e| fail(2, format!("{file}: {e}")));
        println!("{file}: {} -> {} bytes, same run", old.len(), new.len());
    }
}
