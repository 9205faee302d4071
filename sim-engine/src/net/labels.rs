//! The labels the net part draws, each declared with its lane ([`Label`]): a label
//! whose text would read another lane does not compile.

use crate::choice::lanes::Label;

pub(super) const NET_FAULT_BLACKHOLE: Label = Label::fault("net.fault.blackhole");
pub(super) const NET_FAULT_CLOG: Label = Label::fault("net.fault.clog");
pub(super) const NET_FAULT_CLOG_MS: Label = Label::fault("net.fault.clog_ms");
pub(super) const NET_FAULT_DUPLICATE: Label = Label::fault("net.fault.duplicate");
pub(super) const NET_FAULT_LOSS: Label = Label::fault("net.fault.loss");
pub(super) const NET_FAULT_PARTITION: Label = Label::fault("net.fault.partition");
pub(super) const NET_FAULT_PARTITION_MS: Label = Label::fault("net.fault.partition_ms");
pub(super) const NET_FAULT_PARTITION_SHAPE: Label = Label::fault("net.fault.partition_shape");
pub(super) const NET_FAULT_REFUSE: Label = Label::fault("net.fault.refuse");
pub(super) const NET_FAULT_REORDER: Label = Label::fault("net.fault.reorder");
pub(super) const NET_FAULT_REORDER_MS: Label = Label::fault("net.fault.reorder_ms");
pub(super) const NET_FAULT_RESET: Label = Label::fault("net.fault.reset");
pub(super) const NET_FAULT_SILENT: Label = Label::fault("net.fault.silent");
pub(super) const NET_FAULT_SILENT_AFTER: Label = Label::fault("net.fault.silent_after");
pub(super) const NET_FAULT_STALL: Label = Label::fault("net.fault.stall");
pub(super) const NET_FAULT_STALL_MS: Label = Label::fault("net.fault.stall_ms");
pub(super) const NET_JITTER_MS: Label = Label::timing("net.jitter_ms");
pub(super) const NET_LINK_JITTER_MS: Label = Label::timing("net.link.jitter_ms");
pub(super) const NET_LINK_LATENCY_MS: Label = Label::timing("net.link.latency_ms");
pub(super) const NET_ROUTE: Label = Label::timing("net.route");
pub(super) const NET_SWARM_BLACKHOLE: Label = Label::setup("net.swarm.blackhole");
pub(super) const NET_SWARM_BLACKHOLE_ON: Label = Label::setup("net.swarm.blackhole.on");
pub(super) const NET_SWARM_CLOG: Label = Label::setup("net.swarm.clog");
pub(super) const NET_SWARM_CLOG_ON: Label = Label::setup("net.swarm.clog.on");
pub(super) const NET_SWARM_DUP: Label = Label::setup("net.swarm.dup");
pub(super) const NET_SWARM_DUP_ON: Label = Label::setup("net.swarm.dup.on");
pub(super) const NET_SWARM_LOSS: Label = Label::setup("net.swarm.loss");
pub(super) const NET_SWARM_LOSS_ON: Label = Label::setup("net.swarm.loss.on");
pub(super) const NET_SWARM_PARTITION: Label = Label::setup("net.swarm.partition");
pub(super) const NET_SWARM_PARTITION_ON: Label = Label::setup("net.swarm.partition.on");
pub(super) const NET_SWARM_REFUSE: Label = Label::setup("net.swarm.refuse");
pub(super) const NET_SWARM_REFUSE_ON: Label = Label::setup("net.swarm.refuse.on");
pub(super) const NET_SWARM_REORDER: Label = Label::setup("net.swarm.reorder");
pub(super) const NET_SWARM_REORDER_ON: Label = Label::setup("net.swarm.reorder.on");
pub(super) const NET_SWARM_RESET: Label = Label::setup("net.swarm.reset");
pub(super) const NET_SWARM_RESET_ON: Label = Label::setup("net.swarm.reset.on");
pub(super) const NET_SWARM_SILENT: Label = Label::setup("net.swarm.silent");
pub(super) const NET_SWARM_SILENT_ON: Label = Label::setup("net.swarm.silent.on");
pub(super) const NET_SWARM_STALL: Label = Label::setup("net.swarm.stall");
pub(super) const NET_SWARM_STALL_ON: Label = Label::setup("net.swarm.stall.on");
