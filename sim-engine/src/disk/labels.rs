//! The labels the disk part draws, each declared with its lane ([`Label`]): a label
//! whose text would read another lane does not compile.

use crate::choice::lanes::Label;

pub(super) const DISK_CORRUPT: Label = Label::fault("disk.corrupt");
pub(super) const DISK_CORRUPT_BITS: Label = Label::fault("disk.corrupt.bits");
pub(super) const DISK_CORRUPT_BYTE: Label = Label::fault("disk.corrupt.byte");
pub(super) const DISK_CORRUPT_SECTOR: Label = Label::fault("disk.corrupt.sector");
pub(super) const DISK_CRASH_DIR: Label = Label::fault("disk.crash.dir");
pub(super) const DISK_CRASH_SET_LEN: Label = Label::fault("disk.crash.set_len");
pub(super) const DISK_CRASH_TEAR: Label = Label::fault("disk.crash.tear");
pub(super) const DISK_CRASH_WRITE: Label = Label::fault("disk.crash.write");
pub(super) const DISK_LATENCY: Label = Label::timing("disk.latency");
pub(super) const DISK_LOST_WRITE: Label = Label::fault("disk.lost_write");
pub(super) const DISK_MISDIRECT: Label = Label::fault("disk.misdirect");
pub(super) const DISK_MISDIRECT_SECTOR: Label = Label::fault("disk.misdirect.sector");
pub(super) const DISK_READ_ERROR: Label = Label::fault("disk.read_error");
pub(super) const DISK_SLOW: Label = Label::fault("disk.slow");
pub(super) const DISK_SLOW_MS: Label = Label::fault("disk.slow_ms");
pub(super) const DISK_SWARM_CORRUPT: Label = Label::setup("disk.swarm.corrupt");
pub(super) const DISK_SWARM_CORRUPT_ON: Label = Label::setup("disk.swarm.corrupt.on");
pub(super) const DISK_SWARM_LOST_WRITE: Label = Label::setup("disk.swarm.lost_write");
pub(super) const DISK_SWARM_LOST_WRITE_ON: Label = Label::setup("disk.swarm.lost_write.on");
pub(super) const DISK_SWARM_MISDIRECT: Label = Label::setup("disk.swarm.misdirect");
pub(super) const DISK_SWARM_MISDIRECT_ON: Label = Label::setup("disk.swarm.misdirect.on");
pub(super) const DISK_SWARM_READ_ERROR: Label = Label::setup("disk.swarm.read_error");
pub(super) const DISK_SWARM_READ_ERROR_ON: Label = Label::setup("disk.swarm.read_error.on");
pub(super) const DISK_SWARM_SLOW: Label = Label::setup("disk.swarm.slow");
pub(super) const DISK_SWARM_SLOW_ON: Label = Label::setup("disk.swarm.slow.on");
pub(super) const DISK_SWARM_WRITE_ERROR: Label = Label::setup("disk.swarm.write_error");
pub(super) const DISK_SWARM_WRITE_ERROR_ON: Label = Label::setup("disk.swarm.write_error.on");
pub(super) const DISK_WRITE_ERROR: Label = Label::fault("disk.write_error");
