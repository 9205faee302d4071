//! The `sim` command line (built in a later step).
