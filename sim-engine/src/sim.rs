//! The harness: a scenario (nodes, clients, checks, budgets) run as a pure function of one
//! input.
//!
//! A [`Sim`] is built fresh for every run: nodes with their factories, client nodes whose
//! main tasks are the workload, safety invariants checked after **every** event, and
//! `eventually` properties checked once the workload is done, within a bound of virtual time.
//!
//! A run ends when
//! * an invariant fails ([`Class::Correctness`]) or system code panics ([`Class::Panic`]);
//! * every client finished and every `eventually` property holds ([`Class::Pass`]), or one
//!   did not within its bound ([`Class::Liveness`]). Liveness is judged after a heal phase:
//!   once the workload is done, the network draws no new faults (those in force run out on
//!   their own bounded schedule), so "never" is told apart from "not while partitioned";
//! * nothing is runnable and nothing is scheduled while clients are unfinished
//!   ([`Class::Deadlock`]);
//! * the step budget runs out, or the time budget while clients are unfinished
//!   ([`Class::Inconclusive`]). A scenario with no clients simply runs for its time budget.
//!
//! ```
//! use std::cell::Cell;
//! use std::rc::Rc;
//! use std::time::Duration;
//! use sim_core::report::Class;
//! use sim_core::sim::{Config, Sim};
//! use sim_core::time::sleep;
//!
//! let mut sim = Sim::new(Config::default());
//! let counter = Rc::new(Cell::new(0));
//! let c = counter.clone();
//! sim.client("client", move |_| {
//!     let c = c.clone();
//!     async move {
//!         for _ in 0..3 {
//!             sleep(Duration::from_millis(10)).await;
//!             c.set(c.get() + 1);
//!         }
//!     }
//! });
//! let seen = counter.clone();
//! sim.invariant("at most two", move || if seen.get() <= 2 { Ok(()) } else { Err(format!("counter is {}", seen.get())) });
//! let report = sim.run_seed(0);
//! assert_eq!(report.outcome.class, Class::Correctness);
//! assert_eq!(report.outcome.invariant.as_deref(), Some("at most two"));
//! ```

use std::cell::{Cell, RefCell};
use std::fmt::Debug;
use std::future::Future;
use std::hash::Hash;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;
use std::task::{Context, Poll};
use std::time::Duration;

use crate::choice::intensity::Intensity;
use crate::choice::{Choices, Draw, Input, Recorder, RunSource, Source};
use crate::nemesis::{self, LifecycleFaults};
use crate::net::{self, NetConfig, Network};
use crate::node::{self, NodeCtx, NodeId, NodeState, Nodes};
use crate::report::{Class, Outcome};
use crate::rt::{self, Strategy};
use crate::time::{duration_ns, ClockFaults, Due};
use crate::trace::{stable_hash, EventKind, History, Recording};
use crate::world::DueEvent;
use crate::world::{self, with, World};

use crate::choice::lanes::Label;

// The labels this part draws, each declared with its lane: a label whose text would read
// another lane does not compile.
const TIME_TIE: Label = Label::timing("time.tie");

/// Budgets and knobs of a run.
#[derive(Clone, Debug)]
pub struct Config {
    /// The run is inconclusive after this many history events.
    pub budget_steps: u64,
    /// Virtual time limit (see the module docs for what reaching it means).
    pub budget_time: Duration,
    /// Which ready task runs next.
    pub strategy: Strategy,
    /// Network latency.
    pub net: NetConfig,
    /// Keep every event with details (for replays), or the hash only (for sweeps).
    pub recording: Recording,
    /// The nodes' wall clocks and timer faults (off: every clock true, every timer on time).
    pub clock_faults: ClockFaults,
    /// The lifecycle nemesis: crashes, stops and pauses drawn per run (off by default).
    pub lifecycle: LifecycleFaults,
    /// Every node's disk: latencies, faults (off by default) and the fault atlas
    /// ([`crate::disk::DiskConfig::default`]).
    pub disk: crate::disk::DiskConfig,
    /// How often a seed's run fires its faults: at the odds the scenario sets (the default),
    /// or at a profile drawn per seed ([`Intensity::Swarm`]). Byte inputs say every decision
    /// themselves and are run as they are.
    pub intensity: Intensity,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            budget_steps: 1_000_000,
            budget_time: Duration::from_secs(600),
            strategy: Strategy::Uniform,
            net: NetConfig::default(),
            recording: Recording::HashOnly,
            clock_faults: ClockFaults::Off,
            lifecycle: LifecycleFaults::Off,
            disk: crate::disk::DiskConfig::default(),
            intensity: Intensity::Configured,
        }
    }
}

type Check = Box<dyn FnMut() -> Result<(), String>>;
type Setup = Box<dyn FnOnce(&mut dyn Source)>;

struct Eventually {
    name: String,
    within_ns: u64,
    check: Box<dyn FnMut() -> bool>,
}

/// A scenario, ready to run once.
pub struct Sim {
    config: Config,
    nodes: Vec<NodeState>,
    invariants: Vec<(String, Check)>,
    eventually: Vec<Eventually>,
    setups: Vec<Setup>,
    nemesis_targets: Option<Vec<NodeId>>,
}

/// What a run produced.
#[derive(Debug)]
pub struct Report {
    /// Class, invariant, steps, time, hash.
    pub outcome: Outcome,
    /// The history (events only if recording was on).
    pub history: History,
}

impl Sim {
    /// An empty scenario.
    pub fn new(config: Config) -> Self {
        Sim {
            config,
            nodes: Vec::new(),
            invariants: Vec::new(),
            eventually: Vec::new(),
            setups: Vec::new(),
            nemesis_targets: None,
        }
    }

    /// The configuration this run will use.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Mutable access to the configuration (e.g. for swarm settings chosen by a system).
    pub fn config_mut(&mut self) -> &mut Config {
        &mut self.config
    }

    fn add(&mut self, name: &str, client: bool, factory: node::Factory) -> NodeId {
        assert!(
            self.nodes.iter().all(|n| &*n.name != name),
            "two nodes named {name:?}; node names must be unique"
        );
        self.nodes.push(NodeState::new(name, factory, client));
        NodeId((self.nodes.len() - 1) as u32)
    }

    /// Adds a node; `factory` builds its main future at every start (first start and restarts).
    pub fn node<F, Fut>(&mut self, name: &str, factory: F) -> NodeId
    where
        F: Fn(NodeCtx) -> Fut + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        self.add(name, false, node::factory(factory))
    }

    /// Adds a client node: its main task is workload, and the run is done when every client's
    /// main task has finished (and the `eventually` properties hold).
    pub fn client<F, Fut>(&mut self, name: &str, factory: F) -> NodeId
    where
        F: Fn(NodeCtx) -> Fut + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        self.add(name, true, node::factory(factory))
    }

    /// A safety property, checked after every event. `Err` explains the violation.
    pub fn invariant(&mut self, name: &str, check: impl FnMut() -> Result<(), String> + 'static) {
        self.invariants.push((name.to_string(), Box::new(check)));
    }

    /// A liveness property: once the workload is done, it must hold within `within` of
    /// virtual time.
    pub fn eventually(
        &mut self,
        name: &str,
        within: Duration,
        check: impl FnMut() -> bool + 'static,
    ) {
        self.eventually.push(Eventually {
            name: name.to_string(),
            within_ns: duration_ns(within),
            check: Box::new(check),
        });
    }

    /// The nodes the lifecycle nemesis ([`crate::nemesis`]) may crash, stop or pause (by
    /// default every node that is not a client). Names must be of nodes added already.
    ///
    /// # Panics
    /// On a name no node has (a scenario bug).
    pub fn nemesis_targets(&mut self, names: &[&str]) {
        let ids = names
            .iter()
            .map(|name| {
                let i = self
                    .nodes
                    .iter()
                    .position(|n| &*n.name == *name)
                    .unwrap_or_else(|| {
                        panic!("nemesis target {name:?} is not a node; add the node first")
                    });
                NodeId(i as u32)
            })
            .collect();
        self.nemesis_targets = Some(ids);
    }

    /// Runs `setup` with the run's source before any node starts: the first draws of a run
    /// (swarm settings, workload shape) belong here.
    pub fn setup(&mut self, setup: impl FnOnce(&mut dyn Source) + 'static) {
        self.setups.push(Box::new(setup));
    }

    /// Runs on a seed.
    pub fn run_seed(self, seed: u64) -> Report {
        self.run_input(&Input::Seed(seed))
    }

    /// Runs on an input.
    pub fn run_input(self, input: &Input) -> Report {
        let intensity = self.config.intensity;
        self.run_on(RunSource::from_input(input, intensity))
    }

    /// Runs on `input` and also returns the bytes that replay this run under
    /// [`crate::choice::Bytes`] (how a seed becomes a fuzz corpus entry).
    pub fn run_encoded(self, input: &Input) -> (Report, Vec<u8>) {
        let (report, draws) = self.run_logged(input);
        (report, crate::choice::encode(&draws))
    }

    /// Runs on `input` and also returns every draw it made (label, bound, value), in order:
    /// the choice sequence a shrinker works on.
    pub fn run_logged(self, input: &Input) -> (Report, Vec<Draw>) {
        let recorder = Recorder::new(input.source_at(self.config.intensity));
        let log = recorder.log();
        let report = self.run(Box::new(recorder));
        let draws = log.take().draws;
        (report, draws)
    }

    /// Runs on any source.
    pub fn run(self, source: Box<dyn Source>) -> Report {
        self.run_on(RunSource::Other(source))
    }

    fn run_on(self, source: RunSource) -> Report {
        install_panic_hook();
        // std draws this thread's `HashMap` keys on the first `RandomState` it makes. Made
        // here, outside the run, that draw never lands inside a run: with the OS hooks linked
        // it would take bytes from the input, and only in the first run on the thread.
        let _ = std::collections::hash_map::RandomState::new();
        let epoch = world::next_epoch();
        rt::set_wake_epoch(epoch);
        let Sim {
            config,
            nodes,
            mut invariants,
            mut eventually,
            setups,
            nemesis_targets,
        } = self;
        let node_count = nodes.len();
        let mut targets: Vec<u32> = match nemesis_targets {
            Some(ids) => ids.into_iter().map(|id| id.0).collect(),
            None => (0..node_count as u32)
                .filter(|&i| !nodes[i as usize].client)
                .collect(),
        };
        targets.sort_unstable();
        targets.dedup();
        world::install(World::new(
            epoch,
            source,
            config.strategy.build(),
            Network::new(config.net),
            crate::disk::Disks::new(config.disk.clone()),
            Nodes::new(nodes),
            History::new(config.recording),
        ));
        with(|w| {
            // The first draws of a run, in this order: network, clocks, nemesis, disks. Each
            // draws only what is on.
            net::start_run(&mut w.net_view());
            crate::time::start_run(w, config.clock_faults);
            nemesis::start_run(w, config.lifecycle, targets);
            crate::disk::start_run(&mut w.disk_view());
        });
        let in_sim = InSim::enter();
        crate::os::reset_escape();
        let outcome = {
            let mut driver = Driver {
                config: &config,
                invariants: &mut invariants,
                eventually: &mut eventually,
            };
            driver
                .start(setups, node_count)
                .unwrap_or_else(|| driver.drive())
        };
        // A panic is a failure even when the node's own code caught it: in a real process it
        // would at least have been printed, and the hook keeps runs silent.
        let outcome = match caught_inside_a_node() {
            Some(message) if outcome.0 != Class::Panic => (Class::Panic, None, message),
            _ => outcome,
        };
        // Tear down: drop every task outside the world borrow (their drops may touch it), then
        // remove the world. Nothing of the run survives: memory is flat across runs.
        let leftovers: Vec<_> = with(|w| {
            w.history_mut().seal();
            w.exec_mut().take_all_futures()
        });
        drop(leftovers);
        drop(in_sim);
        let mut world = world::uninstall().expect("world installed for the run");
        // A call the OS hooks refused makes the run untrustworthy, whatever else it found.
        let (class, invariant, message) = match crate::os::take_escape() {
            Some(call) => (
                Class::Panic,
                None,
                format!(
                    "escaped the simulation: system code called {call}, which would run outside \
                     virtual time and the run's input; the call was refused (see sim_core::os)"
                ),
            ),
            None => outcome,
        };
        let outcome = Outcome {
            class,
            invariant,
            message,
            steps: world.history().len(),
            sim_time_ns: world.now_ns(),
            history_hash: world.history().hash(),
            input_exhausted: world.source().is_exhausted(),
        };
        Report {
            outcome,
            history: world.into_history(),
        }
    }
}

type Ending = (Class, Option<String>, String);

/// The driver's next move, decided under one borrow of the world.
enum Next {
    /// The task parked by the last poll lost its slot during that poll (its node crashed):
    /// its future is dropped outside the borrow, and the next move is decided again.
    Orphan(rt::BoxFuture),
    Fired,
    Poll(u32, rt::BoxFuture, u32),
    OutOfSteps,
    OutOfTime,
    Idle,
}

/// The budgets a move checks.
#[derive(Clone, Copy)]
struct Limits {
    budget_steps: u64,
    budget_time_ns: u64,
}

/// Decides the driver's next move under one borrow of the world: puts back the task the last
/// poll parked, then moves; while `quiet` (nothing outside the world looks between moves) and
/// no task ended, moves that only fire go on in the same borrow. Returns the move and the
/// executor's ending count after it.
fn next_move(
    w: &mut World,
    parked: Option<(u32, rt::BoxFuture)>,
    quiet: bool,
    ended_seen: u64,
    limits: Limits,
    due: &mut Vec<Due<DueEvent>>,
) -> (Next, u64) {
    if let Some((task, future)) = parked {
        if let Some(orphan) = w.exec_mut().put_back(task, future) {
            return (Next::Orphan(orphan), w.exec().ended());
        }
    }
    let ended = w.exec().ended();
    let fold = quiet && ended == ended_seen;
    loop {
        let next = w.step(limits, due);
        // A fire that ended no task leaves nothing for the loop outside to check. (A
        // lifecycle action coming due counts as an ending: see `World::deliver`.)
        if matches!(next, Next::Fired) && fold && w.exec().ended() == ended {
            continue;
        }
        // Only a fire that queued a lifecycle action moves the count inside this borrow:
        // returning it applies the action before the next move.
        return (next, w.exec().ended());
    }
}

impl World {
    /// One move of the run: fire what is due now, else take the ready task the scheduler
    /// picks (its future goes to the caller for polling), else jump the clock to the next
    /// deadline and fire what is due there — or say why there is no move (budget, idle).
    fn step(&mut self, limits: Limits, due: &mut Vec<Due<DueEvent>>) -> Next {
        if self.history().len() >= limits.budget_steps {
            return Next::OutOfSteps;
        }
        self.exec_mut().drain_wakes();
        // Whatever this move draws before a task is polled, the run loop draws.
        self.source().mark_node(None);
        let now = self.now_ns();
        // Only look closer (skipping cancelled timers) when something may be due now; most
        // moves just poll a ready task.
        let due_now = match self.clock().peek_due() {
            Some(at) if at <= now => self.clock_mut().next_due().filter(|&at| at <= now),
            _ => None,
        };
        if let Some(at) = due_now {
            fire_due(self, at, due);
            return Next::Fired;
        }
        if self.exec().has_ready() {
            let index = self.pick_ready();
            let (task, future) = self.exec_mut().take(index);
            let node = self.exec().node_of(task);
            self.source().mark_node(Some(node));
            self.record(Some(node), EventKind::Step { task }, || {
                format!("task {task}")
            });
            return Next::Poll(task, future, self.epoch());
        }
        match self.clock_mut().next_due() {
            Some(at) if at > limits.budget_time_ns => Next::OutOfTime,
            Some(at) => {
                debug_assert!(at >= now, "virtual time never goes back");
                self.clock_mut().advance_to(at);
                self.source().mark_time(at);
                fire_due(self, at, due);
                Next::Fired
            }
            None => Next::Idle,
        }
    }
}

struct Driver<'a> {
    config: &'a Config,
    invariants: &'a mut Vec<(String, Check)>,
    eventually: &'a mut Vec<Eventually>,
}

impl Driver<'_> {
    fn start(&mut self, setups: Vec<Setup>, node_count: usize) -> Option<Ending> {
        for setup in setups {
            // The source is taken out so setup code may itself call into the world.
            let mut source = with(|w| {
                w.replace_source(RunSource::Bytes(Box::new(crate::choice::Bytes::new(
                    Vec::new(),
                ))))
            });
            let result = panic::catch_unwind(AssertUnwindSafe(|| setup(&mut source)));
            with(|w| w.replace_source(source));
            if let Err(payload) = result {
                return Some((
                    Class::Panic,
                    None,
                    format!("setup panicked: {}", panic_message(&payload)),
                ));
            }
        }
        for id in 0..node_count as u32 {
            if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| node::start(id))) {
                return Some((
                    Class::Panic,
                    None,
                    format!("node factory panicked: {}", panic_message(&payload)),
                ));
            }
        }
        None
    }

    /// Runs moves until the run ends. The driver does checks, budgets and termination; the
    /// world makes each move ([`World::step`]).
    fn drive(&mut self) -> Ending {
        let limits = Limits {
            budget_steps: self.config.budget_steps,
            budget_time_ns: duration_ns(self.config.budget_time),
        };
        let mut due = Vec::new();
        let mut liveness_start_ns: Option<u64> = None;
        // Whether the workload is done changes only when a task ends: check it then.
        let mut ended_seen = u64::MAX;
        // A task that returned `Pending`, waiting to be put back in its slot (see `poll`).
        let mut parked: Option<(u32, rt::BoxFuture)> = None;
        loop {
            if let Some(end) = self.check_safety() {
                return end;
            }
            // When nothing outside the world has to look between two moves (no invariant, no
            // workload-done check pending), moves that only fire go on in the same borrow.
            let quiet = self.invariants.is_empty() && liveness_start_ns.is_none();
            let (next, ended) =
                with(|w| next_move(w, parked.take(), quiet, ended_seen, limits, &mut due));
            if let Next::Orphan(future) = next {
                drop(future);
                continue;
            }
            if ended != ended_seen || liveness_start_ns.is_some() {
                ended_seen = ended;
                if let Some(end) = self.apply_lifecycle() {
                    return end;
                }
                if let Some(end) = self.check_done(&mut liveness_start_ns) {
                    if let Next::Poll(task, future, _) = next {
                        // Not polled after all: back in its slot, to be dropped at teardown
                        // with the others (after the history is sealed).
                        let orphan = with(|w| w.exec_mut().put_back(task, future));
                        drop(orphan);
                    }
                    return end;
                }
            }
            let end = match next {
                Next::Orphan(_) => unreachable!("handled above"),
                Next::Fired => None,
                Next::Poll(task, future, epoch) => self.poll(task, future, epoch, &mut parked),
                Next::OutOfSteps => Some((
                    Class::Inconclusive,
                    None,
                    format!("step budget of {} events ran out", limits.budget_steps),
                )),
                Next::OutOfTime => Some(self.out_of_time()),
                Next::Idle => Some(self.at_rest()),
            };
            if let Some(end) = end {
                return end;
            }
        }
    }

    /// Nothing runnable and nothing scheduled: a pass if the workload finished and every
    /// `eventually` holds, else a liveness failure or a deadlock.
    fn at_rest(&mut self) -> Ending {
        if !clients_done() {
            return (
                Class::Deadlock,
                None,
                "nothing runnable and nothing scheduled, but the workload is unfinished".into(),
            );
        }
        match self
            .eventually
            .iter_mut()
            .find_map(|e| (!(e.check)()).then(|| e.name.clone()))
        {
            Some(name) => (
                Class::Liveness,
                Some(name),
                "nothing left to run and the property does not hold".into(),
            ),
            None => (Class::Pass, None, String::new()),
        }
    }

    /// Applies the lifecycle actions that came due (a crash drops futures, a restart builds
    /// them: outside the world's borrow). The fire that queued them moved the executor's
    /// ending count, which brings the driver here.
    fn apply_lifecycle(&mut self) -> Option<Ending> {
        let actions = with(|w| w.take_lifecycle_due());
        if actions.is_empty() {
            return None;
        }
        let applied = panic::catch_unwind(AssertUnwindSafe(|| nemesis::apply(actions)));
        applied.err().map(|payload| {
            (
                Class::Panic,
                None,
                format!(
                    "a node factory panicked at a restart: {}",
                    panic_message(&payload)
                ),
            )
        })
    }

    fn out_of_time(&mut self) -> Ending {
        let has_clients = with(|w| w.nodes().any_client());
        if has_clients {
            (
                Class::Inconclusive,
                None,
                format!(
                    "time budget of {:?} ran out before the workload finished",
                    self.config.budget_time
                ),
            )
        } else {
            (Class::Pass, None, String::new())
        }
    }

    /// Polls a task the scheduler picked, then puts it back or retires it.
    ///
    /// A task that returned `Pending` is usually just put back in its slot. When no invariant
    /// runs between this poll and the next move (nothing can observe the world in between),
    /// it is left in `parked` and put back by the next move's borrow of the world, which saves
    /// a borrow per step.
    fn poll(
        &mut self,
        task: u32,
        mut future: rt::BoxFuture,
        epoch: u32,
        parked: &mut Option<(u32, rt::BoxFuture)>,
    ) -> Option<Ending> {
        // Our wakers own nothing (dropping one does nothing), so this one is never dropped:
        // that saves a call through its vtable on every step.
        let waker = std::mem::ManuallyDrop::new(rt::waker_for(epoch, task));
        let mut cx = Context::from_waker(&waker);
        let polled = panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(&mut cx)));
        if matches!(polled, Ok(Poll::Pending)) && self.invariants.is_empty() {
            *parked = Some((task, future));
            return None;
        }
        let mut exits = None;
        let leftover = with(|w| {
            match &polled {
                // Still alive: the future goes back; if its node crashed during the poll, it
                // comes back to be dropped outside the borrow.
                Ok(Poll::Pending) => w.exec_mut().put_back(task, future),
                _ => {
                    w.exec_mut().end_poll();
                    let node = w.exec().node_of(task);
                    w.exec_mut().retire(task);
                    w.record(Some(node), EventKind::TaskDone { task }, || {
                        format!("task {task}")
                    });
                    // A node asked to stop is down once its main task returns.
                    let n = w.nodes().node(node);
                    if n.stopping && n.main_task == Some(task) {
                        exits = Some(node);
                    }
                    Some(future)
                }
            }
        });
        drop(leftover);
        if let Some(node) = exits {
            node::take_down(node, node::Down::Exit);
        }
        match polled {
            Err(payload) => Some((Class::Panic, None, panic_message(&payload))),
            Ok(_) => None,
        }
    }

    fn check_safety(&mut self) -> Option<Ending> {
        if self.invariants.is_empty() {
            return None;
        }
        for (name, check) in self.invariants.iter_mut() {
            let result = panic::catch_unwind(AssertUnwindSafe(&mut *check));
            let message = match result {
                Ok(Ok(())) => continue,
                Ok(Err(message)) => message,
                Err(payload) => format!("the check itself panicked: {}", panic_message(&payload)),
            };
            let digest = stable_hash(name.as_str());
            with(|w| {
                w.record(None, EventKind::CheckFailed { digest }, || {
                    format!("{name}: {message}")
                })
            });
            return Some((Class::Correctness, Some(name.clone()), message));
        }
        None
    }

    fn check_done(&mut self, deadline: &mut Option<u64>) -> Option<Ending> {
        if !clients_done() {
            return None;
        }
        if self.eventually.is_empty() {
            return Some((Class::Pass, None, String::new()));
        }
        let now = with(|w| w.now_ns());
        let start = *deadline.get_or_insert_with(|| {
            // The heal phase begins: liveness is judged on a network that stops failing, and
            // the nemesis gives back every node it holds down.
            crate::world::with_net(net::stop_drawing_faults);
            nemesis::heal();
            now
        });
        let mut all = true;
        for e in self.eventually.iter_mut() {
            if !(e.check)() {
                all = false;
                if now > start + e.within_ns {
                    return Some((
                        Class::Liveness,
                        Some(e.name.clone()),
                        format!(
                            "did not hold within {:?} after the workload finished",
                            Duration::from_nanos(e.within_ns)
                        ),
                    ));
                }
            }
        }
        all.then(|| (Class::Pass, None, String::new()))
    }
}

/// Applies everything due at `at`, in an order drawn from the input (zero = schedule order).
fn fire_due(w: &mut World, at: u64, due: &mut Vec<Due<DueEvent>>) {
    debug_assert!(due.is_empty());
    // Most instants have one thing due: apply it at once, without the tie-break list (the
    // same as below, where a single entry draws nothing).
    if let Some(first) = w.clock_mut().pop_one_due_at(at) {
        if w.clock().peek_due() != Some(at) {
            apply_due(w, first);
            return;
        }
        due.push(first);
    }
    w.clock_mut().pop_due_at(at, due);
    if due.len() > 1 && w.clock().may_hold_dead() {
        due.retain(|d| w.clock().is_live(d));
    }
    while !due.is_empty() {
        let k = if due.len() > 1 {
            w.source().below(TIME_TIE.name(), due.len() as u64) as usize
        } else {
            0
        };
        let what = due.remove(k);
        apply_due(w, what);
    }
}

/// Applies one thing that is due now: wakes a live timer's task, or delivers a packet.
#[inline]
fn apply_due(w: &mut World, what: Due<DueEvent>) {
    match what {
        Due::Timer(entry) => {
            if let Some((slot, waker)) = w.clock_mut().fire(entry) {
                // A foreign waker names no task of ours: the event is the harness's.
                let task = rt::task_of(&waker, w.epoch()).unwrap_or(u32::MAX);
                let node = w.exec().node_of(task);
                // Only a recording run reads whether the node is paused (for the detail).
                let paused = w.history().is_recording() && w.nodes().is_paused(node);
                w.record(
                    Some(node).filter(|&n| n != u32::MAX),
                    EventKind::Timer { timer: slot },
                    || {
                        let frozen = if paused {
                            " (its node is paused: it runs when resumed)"
                        } else {
                            ""
                        };
                        format!("timer {slot} wakes task {task}{frozen}")
                    },
                );
                w.wake(waker);
            }
        }
        Due::Payload(due) => w.deliver(due),
    }
}

fn clients_done() -> bool {
    with(|w| {
        w.nodes().clients().all(|n| match n.main_task {
            Some(t) => w.exec().is_gone(t),
            None => false,
        })
    })
}

/// Draws from the run's source inside a task: `sim::draw(|s| s.below("ops", 5))`.
/// Must be called from within a simulation.
pub fn draw<R>(f: impl FnOnce(&mut dyn Source) -> R) -> R {
    with(|w| f(w.source()))
}

/// An operation number, returned by [`op_start`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OpId(pub u64);

/// Records that a workload operation started (hashed into the history, shown in traces).
pub fn op_start(op: &(impl Debug + Hash)) -> OpId {
    let digest = stable_hash(op);
    with(|w| {
        let id = w.next_op();
        let node = w.current_node();
        w.record(node, EventKind::OpStart { op: id, digest }, || {
            format!("op {id}: {op:?}")
        });
        OpId(id)
    })
}

/// Records an operation's result.
pub fn op_result(op: OpId, result: &(impl Debug + Hash)) {
    let digest = stable_hash(result);
    with(|w| {
        let node = w.current_node();
        w.record(node, EventKind::OpResult { op: op.0, digest }, || {
            format!("op {}: {result:?}", op.0)
        });
    })
}

/// Adds a free-form note to the history (hashed; shown in traces).
pub fn note(text: &str) {
    let digest = stable_hash(text);
    with(|w| {
        let node = w.current_node();
        w.record(node, EventKind::Note { digest }, || text.to_string());
    })
}

/// Runs `body` once per seed in `seeds`, or only for the seed in the `DST_SEED` environment
/// variable when it is set (how `DST_SEED=N cargo test name` replays one seed of a sweep).
/// Returns the seeds that ran.
///
/// A swarm sweep (a fault profile drawn per seed, [`Intensity::Swarm`]) is the same loop
/// over runs whose [`Config::intensity`] says so; the seed alone still replays each run.
pub fn for_each_seed(seeds: std::ops::Range<u64>, mut body: impl FnMut(u64)) -> Vec<u64> {
    let only = std::env::var("DST_SEED").ok().map(|v| {
        v.trim().parse::<u64>().unwrap_or_else(|_| {
            panic!("DST_SEED={v:?} is not a u64 seed; set it to a number like DST_SEED=17")
        })
    });
    let list: Vec<u64> = match only {
        Some(seed) => vec![seed],
        None => seeds.collect(),
    };
    for &seed in &list {
        eprintln!("replay: DST_SEED={seed} cargo test");
        body(seed);
    }
    list
}

thread_local! {
    static IN_SIM: Cell<bool> = const { Cell::new(false) };
    /// The last panic inside the run, until one of the driver's catch sites reports it.
    static PANIC_AT: RefCell<Option<Panicked>> = const { RefCell::new(None) };
}

/// While alive, the current thread is inside a run: the panic hook is silent.
struct InSim;

impl InSim {
    fn enter() -> InSim {
        IN_SIM.with(|f| f.set(true));
        PANIC_AT.with(|p| p.borrow_mut().take());
        InSim
    }
}

impl Drop for InSim {
    /// Ends the silence, also when a panic escapes the run itself rather than ending it as an
    /// outcome: that is a bug of the engine's (or sim-core's API used outside any task), and
    /// it is printed here, as nothing else would print it.
    fn drop(&mut self) {
        IN_SIM.with(|f| f.set(false));
        if std::thread::panicking() {
            if let Some(panicked) = PANIC_AT.with(|p| p.borrow_mut().take()) {
                let at = panicked
                    .at
                    .map(|at| format!(" at {at}"))
                    .unwrap_or_default();
                // Not `eprintln!`: a closed standard error would panic again, mid-unwind.
                use std::io::Write as _;
                let _ = writeln!(
                    std::io::stderr(),
                    "sim-core: a panic escaped the run{at}: {}",
                    panicked.text
                );
            }
        }
    }
}

/// A panic the hook saw inside a run.
struct Panicked {
    text: String,
    at: Option<String>,
}

/// Panics inside a run are outcomes, not noise: the hook stays silent for them and defers to
/// the previous hook everywhere else.
fn install_panic_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if IN_SIM.with(Cell::get) {
                let at = info
                    .location()
                    .map(|l| format!("{}:{}", l.file(), l.line()));
                let text = any_text(info.payload());
                // The trace ends with the panic, on the task that panicked — also when code
                // inside the node catches it (a tokio task's panic becomes a `JoinError`).
                // The hash covers the message, not the line number, so edits elsewhere in a
                // file leave a panicking run's hash alone.
                world::try_with_installed(|w| {
                    let node = w.current_node();
                    let task = w.exec().current();
                    let digest = crate::trace::stable_hash(&text);
                    w.record(node, EventKind::Note { digest }, || match (task, &at) {
                        (Some(task), Some(at)) => format!("task {task} panicked at {at}: {text}"),
                        (_, Some(at)) => format!("panicked at {at}: {text}"),
                        (_, None) => format!("panicked: {text}"),
                    });
                });
                PANIC_AT.with(|p| *p.borrow_mut() = Some(Panicked { text, at }));
            } else {
                previous(info);
            }
        }));
    });
}

fn panic_message(payload: &Box<dyn std::any::Any + Send>) -> String {
    let text = payload_text(payload);
    match PANIC_AT.with(|p| p.borrow_mut().take()).and_then(|p| p.at) {
        Some(at) => format!("{text} (at {at})"),
        None => text,
    }
}

/// A panic no catch site of the driver reported: code inside a node caught it and went on.
fn caught_inside_a_node() -> Option<String> {
    let panicked = PANIC_AT.with(|p| p.borrow_mut().take())?;
    let at = panicked
        .at
        .map(|at| format!(" (at {at})"))
        .unwrap_or_default();
    Some(format!(
        "a panic inside a node was caught by the code under test (a tokio task's JoinError, \
         or catch_unwind) and the run went on: {}{at}",
        panicked.text
    ))
}

fn payload_text(payload: &Box<dyn std::any::Any + Send>) -> String {
    any_text(payload.as_ref())
}

fn any_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_string()
    }
}
