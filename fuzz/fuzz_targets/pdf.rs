//! libFuzzer's entry for `kobana_inbox_fuzz::pdf`: the invariants live there, where
//! `make test` compiles and runs them too (tests/it/fuzz_checks.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kobana_inbox_fuzz::pdf::check(data));
