//! The behaviour tests, one binary: each module exercises one surface through
//! the real handler (`edge::handle`, or the local port) against the local
//! database that `make test` starts. `common` is the harness they share.

// A panic in a test is a failed test: the harness may unwrap and index.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, reason = "test code")]

mod common;

mod apps;
mod audit;
mod auth;
mod bills;
mod capacity;
mod catalogue_fixtures;
mod command_line;
mod discovery;
mod events_replay;
mod faults;
mod fuzz_checks;
mod injection;
mod jobs_and_webhooks;
mod layers;
mod local_server;
mod mcp_conformance;
mod mcp_tools;
mod narrowing;
mod oauth;
mod one_validation;
mod operations;
mod privacy;
mod properties;
mod raw_mail;
mod request_state;
mod rest_api;
mod runtime;
mod schemas;
mod security;
mod ses_inbound;
mod shards;
mod source_names;
mod tasks;
mod tenancy_admin;
mod text_fields;
mod token_verification;
