//! Fault points: FoundationDB-style `buggify!` sites in system code.
//!
//! A site is a place where system code can choose to misbehave in a way its environment
//! allows — a short read, an early timeout, a smaller batch, an extra retry — to push the
//! system into paths that plain schedules rarely reach. In a simulation each site is enabled
//! or not for the whole run, decided by the input the first time the site is reached (one in
//! four); an enabled site then fires on one evaluation in four. Outside a simulation a site
//! is `false` at the cost of one thread-local read.
//!
//! Sites are keyed by their source location, and enabling is decided on first reach, so the
//! decision is a function of the run, never of how many sites exist or in what order they
//! were compiled.
//!
//! ```
//! use std::time::Duration;
//! use sim_core::buggify;
//! use sim_core::sim::{Config, Sim};
//!
//! // Outside a simulation a site never fires.
//! assert!(!buggify!());
//!
//! let mut sim = Sim::new(Config::default());
//! sim.client("c", |_| async {
//!     let delay_ms = if buggify!() { 500 } else { 5 };
//!     sim_core::time::sleep(Duration::from_millis(delay_ms)).await;
//! });
//! assert!(sim.run_seed(0).outcome.class.is_pass());
//! ```

use crate::choice::Choices;
use crate::trace::{stable_hash, EventKind};
use crate::world;

use crate::choice::lanes::Label;

// The labels this part draws, each declared with its lane: a label whose text would read
// another lane does not compile.
const BUGGIFY_ENABLE: Label = Label::setup("buggify.enable");
const BUGGIFY_FIRE: Label = Label::fault("buggify.fire");

/// True when the fault point at this source location fires in this run.
#[macro_export]
macro_rules! buggify {
    () => {
        $crate::buggify::fire(concat!(file!(), ":", line!(), ":", column!()))
    };
}

/// The function behind [`buggify!`]: `site` is the site's source location.
pub fn fire(site: &'static str) -> bool {
    if !world::in_simulation() {
        return false;
    }
    world::with(|w| {
        let enabled = match w.buggify_site(site) {
            Some(on) => on,
            None => {
                let on = w.source().chance(BUGGIFY_ENABLE.name(), 1, 4);
                w.set_buggify_site(site, on);
                on
            }
        };
        let fires = enabled && w.source().chance(BUGGIFY_FIRE.name(), 1, 4);
        if fires {
            let node = w.current_node();
            w.record(
                node,
                EventKind::Fault {
                    digest: stable_hash(site),
                },
                || format!("buggify {site}"),
            );
        }
        fires
    })
}
