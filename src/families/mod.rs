//! The paper families. Each is one folder; this file is the one registry.

pub mod ccyw;
