//! Adds an input to the checked-in corpus with its metadata, or re-pins an existing entry.
//!
//! `cargo run -p acceptance --example corpus_add -- TARGET SYSTEM FILE NAME [BUG]`
//!
//! Copies FILE to `corpus/TARGET/NAME.bin` and writes `corpus/TARGET/NAME.json` with the
//! system, bug, class, invariant and history hash of its run (the same harness the fuzz
//! targets and `tests/corpus.rs` use, including the determinism self-check). Prints the
//! metadata. SYSTEM may be an example system or a fixture (`lock`, `floor`).

use std::path::Path;

use sim_core::fuzz::{Engine, Harness};
use sim_core::system;

fn fail(message: impl std::fmt::Display) -> ! {
    eprintln!("error: {message}");
    std::process::exit(2)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 4 {
        fail("usage: corpus_add TARGET SYSTEM FILE NAME [BUG]");
    }
    let (target, system_name, file, name) = (&args[0], &args[1], &args[2], &args[3]);
    let bug = args
        .get(4)
        .map(String::as_str)
        .filter(|b| !b.is_empty() && *b != "-");
    let specs: Vec<_> = systems::all()
        .into_iter()
        .chain(systems::fixtures::all())
        .collect();
    let spec = system::find(&specs, system_name).unwrap_or_else(|e| fail(e));
    let harness = Harness::new(spec, bug, target, Engine::Test).unwrap_or_else(|e| fail(e));
    let data = std::fs::read(file).unwrap_or_else(|e| fail(format!("cannot read {file}: {e}")));
    let checked = harness.check(&data);
    if checked.outcome.class == sim_core::report::Class::Diverged {
        fail(format!(
            "{file} does not replay deterministically: {}",
            checked.outcome.message
        ));
    }
    let meta = harness.metadata(&checked);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("corpus")
        .join(target);
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| fail(format!("cannot create {}: {e}", dir.display())));
    let bin = dir.join(format!("{name}.bin"));
    std::fs::write(&bin, &data)
        .unwrap_or_else(|e| fail(format!("cannot write {}: {e}", bin.display())));
    let json = serde_json::to_string_pretty(&meta).expect("metadata serialises") + "\n";
    std::fs::write(bin.with_extension("json"), &json)
        .unwrap_or_else(|e| fail(format!("cannot write metadata: {e}")));
    println!(
        "corpus/{target}/{name}.bin ({} bytes): {}",
        data.len(),
        json.trim().replace('\n', " ")
    );
}
