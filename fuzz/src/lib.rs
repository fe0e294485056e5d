//! The fuzz targets' invariants, one module a target, each a `check(data)`
//! that panics when an invariant breaks. libFuzzer calls them from
//! `fuzz_targets/` (`make fuzz`); the server's test suite compiles the same
//! files (`tests/it/fuzz_checks.rs`) and runs them on the seed inputs and on
//! generated ones, so a change of the server's API that breaks a target
//! fails `make test` instead of waiting for the next `make fuzz`.

pub mod boleto;
pub mod jsonrpc;
pub mod mail;
pub mod mcp_prepare;
pub mod pdf;
pub mod routing_header;
pub mod sealed_token;
pub mod webhook_url;
