//! Types and math shared by the backend and the WebAssembly frontend.
//!
//! Architecture invariant: this crate does no I/O and builds for `wasm32-unknown-unknown`.
//! Everything here is a pure function of its arguments.

pub mod annotate;
pub mod api;
pub mod csv;
pub mod interval;
pub mod layout;
pub mod links;
pub mod paper;
pub mod phrases;
pub mod results;
pub mod rng;
pub mod rns;
pub mod screen;
pub mod tidy;
