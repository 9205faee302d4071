//! The labels the time part draws, each declared with its lane ([`Label`]): a label
//! whose text would read another lane does not compile.

use crate::choice::lanes::Label;

pub(super) const TIME_CLOCK_DRIFT_PPM: Label = Label::fault("time.clock.drift_ppm");
pub(super) const TIME_CLOCK_JUMP_AT_MS: Label = Label::fault("time.clock.jump_at_ms");
pub(super) const TIME_CLOCK_JUMP_MS: Label = Label::fault("time.clock.jump_ms");
pub(super) const TIME_CLOCK_JUMPS: Label = Label::fault("time.clock.jumps");
pub(super) const TIME_CLOCK_OFFSET_MS: Label = Label::fault("time.clock.offset_ms");
pub(super) const TIME_FAULT_LATE: Label = Label::fault("time.fault.late");
pub(super) const TIME_FAULT_LATE_MS: Label = Label::fault("time.fault.late_ms");
pub(super) const TIME_SWARM_DRIFT_PPM: Label = Label::setup("time.swarm.drift_ppm");
pub(super) const TIME_SWARM_JUMP_ON: Label = Label::setup("time.swarm.jump.on");
pub(super) const TIME_SWARM_JUMP_MS: Label = Label::setup("time.swarm.jump_ms");
pub(super) const TIME_SWARM_JUMPS: Label = Label::setup("time.swarm.jumps");
pub(super) const TIME_SWARM_LATE: Label = Label::setup("time.swarm.late");
pub(super) const TIME_SWARM_LATE_ON: Label = Label::setup("time.swarm.late.on");
pub(super) const TIME_SWARM_OFFSET_MS: Label = Label::setup("time.swarm.offset_ms");
pub(super) const TIME_SWARM_SKEW_ON: Label = Label::setup("time.swarm.skew.on");
