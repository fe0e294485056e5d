//! The command line of `kobana-inbox-mcp` (`Cli`, clap's derive): `main.rs` parses it
//! with `parse` before any configuration is read, so that `--help` (on every command, at
//! every level) and `--version` need none, and runs the command it names. `command` walks
//! the same tree (the integration tests ask every command for its `--help` through it).
//!
//! `kobana-inbox-mcp admin …` lives here too: the organization administration of a
//! deployed stack from a shell, for its first administrator and for scripts. It reads the
//! table named by `TABLE_NAME` with the standard AWS credential chain (`AWS_PROFILE`,
//! `AWS_REGION`, …) and calls the same operations as the `/api/v1/org` routes
//! (`crate::api::org`), audited with surface `cli` and the subject `--as` names (default
//! `cli:$USER`).
//!
//! `--dry-run` writes nothing, ever: it runs the operation against a dry-run
//! store (`Store::dry_run`, whose client refuses every call that is not a
//! read), prints the items the real run would write, and answers what the
//! real run would (its refusals included: the operations read every
//! condition first). A call that would change nothing says so.
//!
//! `admin workspace shards` is the operator's: it raises a workspace's write
//! shards (`crate::domain::shards`; docs/operations.md, "Raising a
//! workspace's write shards") through an operation no route or token
//! reaches (`org::WORKSPACE_SHARDS`) — what a workspace costs to list is the
//! operator's decision, not its administrator's — and is audited like the
//! others. It has no `--dry-run`: its two updates are the store's
//! (`Store::set_write_shards`), not a described transaction.
//!
//! The command line is strict, since its values end up in the audit trail
//! (`Checked`, every flag's value parser): a flag's value never starts with
//! `--` (`--name --dry-run` is a missing name, not a name), and no value holds
//! a control character, a line or paragraph separator or an invisible
//! formatting character (`--as` with a newline would forge a line of the
//! trail's readers). A refusal names the flag, never the value it refuses.
//!
//! Exit codes: 0 done (and `--help`, `-h` or `help` asked for: usage on
//! stdout); 2 the command line is wrong (clap's error and the usage on
//! stderr); 3 the operation refused (its error code and message on stderr:
//! not found, last admin, slug taken, invalid value); 4 the table could not
//! be reached or the configuration is wrong.

use std::ffi::{OsStr, OsString};
#[cfg(feature = "dev")]
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::builder::TypedValueParser;
use clap::error::ErrorKind;
use clap::{Args, CommandFactory as _, FromArgMatches as _, Parser, Subcommand};
use serde_json::{Map, Value};

use crate::api::audit::Origin;
use crate::api::error::ApiError;
use crate::api::{self, Input, Op, Param, Route, Services, org};
use crate::auth::Principal;
use crate::domain::records::Surface;
use crate::domain::{OrgId, Scope, Scopes, Tenant};
use crate::secrets::Secrets;
use crate::store::Store;

/// The whole command line: a command, `serve` when none is given.
#[derive(Debug, Parser)]
#[command(
    name = "kobana-inbox-mcp",
    bin_name = "kobana-inbox-mcp",
    version,
    about = "The Kobana Autonomous Inbox MCP server and REST API",
    after_help = "`kobana-inbox-mcp <command> --help` says what one does. Configuration is read from the \
                  environment (docs/operations.md#configuration), after the command line: --help needs none."
)]
pub struct Cli {
    // No doc comment: clap would take it as help text.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The binary's commands (`main.rs` runs them); the doc comments are their help.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP and the REST API (the default)
    ///
    /// Serve MCP (/mcp) and the REST API (/api/v1): on Lambda, API Gateway events; elsewhere
    /// http://127.0.0.1:$PORT (with the development issuer on $DEV_ISSUER_PORT when
    /// DEV_ISSUER_KEY is set). The command when none is given.
    Serve,
    /// Organization administration
    ///
    /// Organization administration against the table (TABLE_NAME): one command of a group
    /// with its flags.
    #[command(subcommand)]
    Admin(AdminCommand),
    /// Print the OpenAPI document of /api/v1
    ///
    /// Print the OpenAPI 3.1 document of /api/v1 (needs no configuration).
    Openapi,
    /// Print the version (as --version does)
    #[command(hide = true)]
    Version,
    // The development commands, among the others (no doc comment: clap would take it).
    #[cfg(feature = "dev")]
    #[command(flatten)]
    Dev(DevCommand),
}

/// The development commands: builds with the `dev` feature only (the Lambda artefacts are
/// built without it, and so have neither these commands nor their help).
#[cfg(feature = "dev")]
#[derive(Debug, Subcommand)]
pub enum DevCommand {
    /// Create the local table
    ///
    /// Create the table TABLE_NAME at DYNAMODB_ENDPOINT (index, stream, TTL); prints
    /// `created`, or `exists` and changes nothing. Needs the table's settings only.
    CreateTable,
    /// Write the demo data
    ///
    /// Write the demo organizations, workspaces, people, inboxes, e-mails and webhooks.
    Seed,
    /// Print a development token
    ///
    /// Print a development token of the development issuer (DEV_ISSUER_KEY); SUB, ORG,
    /// SCOPES, AUD (mcp|api|both) and TTL_SECS pick its contents.
    DevToken,
    /// Run one recorded API Gateway event
    ///
    /// Run one recorded API Gateway event through the Lambda conversion and the handler,
    /// and print the response API Gateway would receive.
    Invoke {
        /// The event (API Gateway JSON); {{TOKEN}}, {{AUDITOR_TOKEN}} and {{PIPELINE_TOKEN}}
        /// in it become development tokens
        #[arg(value_name = "EVENT.JSON")]
        event: PathBuf,
    },
    /// A local webhook receiver that checks signatures
    ///
    /// A local webhook receiver on 127.0.0.1:$RECEIVER_PORT (default 3002): verifies each
    /// delivery's signature with the demo webhooks' secret (RECEIVER_SECRET to change it)
    /// and prints it.
    Receiver,
    /// Save or restore the local table
    ///
    /// Save or restore the local table (DYNAMODB_ENDPOINT on 127.0.0.1, localhost or
    /// [::1]): every item in a file, DynamoDB JSON, one item per line.
    #[command(subcommand)]
    Snapshot(Snapshot),
}

/// `snapshot save|restore <FILE>`.
#[cfg(feature = "dev")]
#[derive(Debug, Subcommand)]
pub enum Snapshot {
    /// Write every item of the local table to FILE
    Save {
        /// Where (the file, and a directory it makes, are the owner's only)
        file: PathBuf,
    },
    /// Write the items of FILE back into the local table, which must be empty
    Restore {
        /// A file `snapshot save` wrote (a bad line restores nothing)
        file: PathBuf,
    },
}

/// `admin`'s groups of commands (`admin --help` lists every command: `command`).
#[derive(Debug, Subcommand)]
pub enum AdminCommand {
    /// The organization
    #[command(subcommand)]
    Org(OrgCommand),
    /// The organization's administrators (org_admin)
    #[command(subcommand)]
    OrgAdmin(OrgAdminCommand),
    /// Workspaces
    #[command(subcommand)]
    Workspace(WorkspaceCommand),
    /// A workspace's members
    #[command(subcommand)]
    Member(MemberCommand),
    /// A workspace's mail pipelines
    #[command(subcommand)]
    Pipeline(PipelineCommand),
}

/// What every administration command's help says after its flags.
const ADMIN_ENVIRONMENT: &str = "Environment: TABLE_NAME, AWS_REGION, the AWS credential chain; \
                                 DYNAMODB_ENDPOINT for a local table.";

/// The flags of every administration command: the organization, and who acts.
#[derive(Debug, Args)]
#[command(after_help = ADMIN_ENVIRONMENT)]
pub struct Target {
    /// The organization's id (1 to 64 letters, digits, _ or -)
    #[arg(long, allow_hyphen_values = true, value_name = "ORG", value_parser = Checked(org_id))]
    org: OrgId,
    /// Who the audit trail names, 1 to 255 characters [default: cli:$USER]
    #[arg(long = "as", allow_hyphen_values = true, value_name = "SUBJECT", value_parser = Checked(acting))]
    acting: Option<String>,
}

/// `Target` and `--dry-run`: the flags of every command but `workspace shards`.
#[derive(Debug, Args)]
pub struct Global {
    #[command(flatten)]
    target: Target,
    /// Print the items the change would write and what the real run would answer; write
    /// nothing, not even an audit record
    #[arg(long)]
    dry_run: bool,
}

/// A list's page.
#[derive(Debug, Args)]
pub struct Page {
    /// At most this many items
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = Checked(number))]
    limit: Option<u64>,
    /// The page after the one whose meta.next_cursor this is
    #[arg(long, allow_hyphen_values = true, value_parser = Checked(text))]
    cursor: Option<String>,
}

/// `--workspace`: the workspace a command is about.
#[derive(Debug, Args)]
pub struct Workspace {
    /// The workspace's id (ws_…)
    #[arg(long, allow_hyphen_values = true, value_name = "WORKSPACE", value_parser = Checked(text))]
    workspace: String,
}

/// `--subject`: the person or machine client a command is about.
#[derive(Debug, Args)]
pub struct Subject {
    /// Their token subject (the `sub` claim)
    #[arg(long, allow_hyphen_values = true, value_name = "SUBJECT", value_parser = Checked(text))]
    subject: String,
}

#[derive(Debug, Subcommand)]
pub enum OrgCommand {
    /// Create (or rename) the organization
    Create {
        #[command(flatten)]
        global: Global,
        /// The organization's name
        #[arg(long, allow_hyphen_values = true, value_parser = Checked(text))]
        name: String,
    },
    /// Erase every item and file of the organization (offboarding), its audit trail kept
    /// for its legal period; prints the evidence (counts per kind)
    Purge {
        #[command(flatten)]
        target: Target,
        /// Count what the purge would erase, per kind; erase nothing
        #[arg(long)]
        dry_run: bool,
        /// Erase for good: required unless --dry-run
        #[arg(long)]
        yes: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum OrgAdminCommand {
    /// Make a person an organization administrator (org_admin)
    Add {
        #[command(flatten)]
        global: Global,
        #[command(flatten)]
        subject: Subject,
    },
    /// Take org_admin away from a person (never from the last one)
    Remove {
        #[command(flatten)]
        global: Global,
        #[command(flatten)]
        subject: Subject,
    },
    /// List the organization's administrators
    List {
        #[command(flatten)]
        global: Global,
        #[command(flatten)]
        page: Page,
    },
}

#[derive(Debug, Subcommand)]
pub enum WorkspaceCommand {
    /// Create a workspace (its id is chosen by the server)
    Create {
        #[command(flatten)]
        global: Global,
        /// The workspace's name
        #[arg(long, allow_hyphen_values = true, value_parser = Checked(text))]
        name: String,
        /// Its slug, unique in the organization
        #[arg(long, allow_hyphen_values = true, value_parser = Checked(text))]
        slug: String,
    },
    /// List the organization's workspaces
    List {
        #[command(flatten)]
        global: Global,
        #[command(flatten)]
        page: Page,
    },
    /// Rename a workspace
    Rename {
        #[command(flatten)]
        global: Global,
        #[command(flatten)]
        workspace: Workspace,
        /// The workspace's new name
        #[arg(long, allow_hyphen_values = true, value_parser = Checked(text))]
        name: String,
    },
    /// Raise a workspace's write shards (operators: docs/capacity.md)
    #[command(long_about = shards_about())]
    Shards {
        #[command(flatten)]
        target: Target,
        #[command(flatten)]
        workspace: Workspace,
        /// The new number of write shards
        #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = Checked(number))]
        count: u64,
    },
    /// Archive a workspace (its admins still read it; nothing in it changes)
    Archive {
        #[command(flatten)]
        global: Global,
        #[command(flatten)]
        workspace: Workspace,
    },
}

#[derive(Debug, Subcommand)]
pub enum MemberCommand {
    /// Add a person to a workspace, or change their role (viewer, operator, admin)
    Set {
        #[command(flatten)]
        global: Global,
        #[command(flatten)]
        workspace: Workspace,
        #[command(flatten)]
        subject: Subject,
        /// Their role: viewer, operator or admin
        #[arg(long, allow_hyphen_values = true, value_parser = Checked(text))]
        role: String,
    },
    /// Take a person out of a workspace (never its last admin)
    Remove(InWorkspace),
    /// List a workspace's members
    List(WorkspaceList),
}

#[derive(Debug, Subcommand)]
pub enum PipelineCommand {
    /// Register a machine client's subject as a workspace's mail pipeline
    Register(InWorkspace),
    /// Take back a mail pipeline registration
    Unregister(InWorkspace),
    /// List a workspace's mail pipelines
    List(WorkspaceList),
}

/// The flags of a command about one subject in one workspace.
#[derive(Debug, Args)]
pub struct InWorkspace {
    #[command(flatten)]
    global: Global,
    #[command(flatten)]
    workspace: Workspace,
    #[command(flatten)]
    subject: Subject,
}

impl InWorkspace {
    fn call(&self, words: &'static str, op: Op) -> Call<'_> {
        Call::new(words, op, &self.global).workspace(&self.workspace).subject(&self.subject)
    }
}

/// The flags of a list of a workspace's entries.
#[derive(Debug, Args)]
pub struct WorkspaceList {
    #[command(flatten)]
    global: Global,
    #[command(flatten)]
    workspace: Workspace,
    #[command(flatten)]
    page: Page,
}

impl WorkspaceList {
    fn call(&self, words: &'static str, op: Op) -> Call<'_> {
        Call::new(words, op, &self.global).workspace(&self.workspace).page(&self.page)
    }
}

/// `admin workspace shards --help`: what a raise does, from the numbers that rule it.
fn shards_about() -> String {
    format!(
        "Raise a workspace's write shards (operators: docs/capacity.md). The count only grows (1 to {}); \
         lists read the new shards at once, records are written to them {} s later. No --dry-run.",
        crate::domain::shards::MAX_SHARDS,
        crate::domain::Shards::WRITE_DELAY_SECS
    )
}

/// The command line as `parse` reads it: `Cli`'s, and what its derive cannot say — `admin
/// --help` lists every command of every group, each with what it does.
pub fn command() -> clap::Command {
    Cli::command().mut_subcommand("admin", |admin| {
        let mut all = String::from("Every command (each takes --help):\n");
        for group in admin.get_subcommands() {
            for leaf in group.get_subcommands() {
                let words = format!("{} {}", group.get_name(), leaf.get_name());
                let about = leaf.get_about().map(ToString::to_string).unwrap_or_default();
                all.push_str(&format!("  {words:<22} {about}\n"));
            }
        }
        all.push('\n');
        all.push_str(ADMIN_ENVIRONMENT);
        admin.after_help(all)
    })
}

/// Parses `args` (the program's name first). When they ask for help or the version, or are
/// wrong, the exit code after saying so: help and the version on stdout
/// (`sys::print_stdout`: a reader that closed the pipe is no failure), 0; a usage error on
/// stderr, 2.
pub fn parse<I, T>(args: I) -> Result<Cli, ExitCode>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let parsed = command().try_get_matches_from(args).and_then(|matches| Cli::from_arg_matches(&matches));
    parsed.map_err(|error| {
        let text = error.render().to_string();
        if error.use_stderr() {
            eprint!("{text}");
            // 2: clap's code for a wrong command line.
            return u8::try_from(error.exit_code()).map_or(ExitCode::FAILURE, ExitCode::from);
        }
        match crate::sys::print_stdout(&text) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("cannot write to standard output: {e}");
                ExitCode::FAILURE
            }
        }
    })
}

/// A flag's value parser: the value is text that does not start with `--` and holds no
/// hidden character (`domain::text`: controls such as a newline or an escape, line and
/// paragraph separators, bidi and zero-width characters, tags), then whatever the function
/// accepts. A refusal is a usage error (exit 2) naming the flag, not the value: the value
/// may hold the very characters refused.
#[derive(Clone, Copy)]
struct Checked<T>(fn(&str) -> Result<T, String>);

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Checked<T> {
    type Value = T;

    fn parse_ref(&self, cmd: &clap::Command, arg: Option<&clap::Arg>, value: &OsStr) -> Result<T, clap::Error> {
        let flag = arg.and_then(clap::Arg::get_long).map_or_else(|| "a value".to_owned(), |long| format!("--{long}"));
        let refuse = |why: &str| cmd.clone().error(ErrorKind::ValueValidation, format!("{flag} {why}"));
        let text = value.to_str().ok_or_else(|| refuse("must be UTF-8"))?;
        // Every flag allows hyphen values (`-1`, `-x`, as the values they are), so `--name
        // --dry-run` comes here with the value `--dry-run`.
        if text.starts_with("--") {
            return Err(refuse("needs a value (values do not start with --)"));
        }
        if crate::domain::text::first_hidden(text).is_some() {
            return Err(refuse(
                "must not contain control characters, line separators or invisible formatting characters",
            ));
        }
        (self.0)(text).map_err(|why| refuse(&why))
    }
}

fn text(value: &str) -> Result<String, String> {
    Ok(value.to_owned())
}

fn number(value: &str) -> Result<u64, String> {
    value.parse().map_err(|_| "must be a whole number".to_owned())
}

fn org_id(value: &str) -> Result<OrgId, String> {
    OrgId::parse(value).ok_or_else(|| "must be 1 to 64 letters, digits, _ or -".to_owned())
}

/// A token subject: 1 to 255 characters.
fn acting(value: &str) -> Result<String, String> {
    match value.len() {
        1..=255 => Ok(value.to_owned()),
        _ => Err("must be 1 to 255 characters (default cli:$USER)".to_owned()),
    }
}

/// What one command calls: its words (the trail's `action` is `admin <words>`), its
/// operation, its organization and actor, the path's workspace and subject, and its other
/// flags as the operation's arguments.
struct Call<'a> {
    words: &'static str,
    op: Op,
    target: &'a Target,
    dry_run: bool,
    workspace: &'a str,
    subject: &'a str,
    args: Map<String, Value>,
}

impl<'a> Call<'a> {
    fn new(words: &'static str, op: Op, global: &'a Global) -> Self {
        Call::of(words, op, &global.target, global.dry_run)
    }

    fn of(words: &'static str, op: Op, target: &'a Target, dry_run: bool) -> Self {
        Call { words, op, target, dry_run, workspace: "", subject: "", args: Map::new() }
    }

    fn workspace(self, workspace: &'a Workspace) -> Self {
        Call { workspace: &workspace.workspace, ..self }
    }

    fn subject(self, subject: &'a Subject) -> Self {
        Call { subject: &subject.subject, ..self }
    }

    fn arg(mut self, name: &str, value: impl Into<Value>) -> Self {
        self.args.insert(name.to_owned(), value.into());
        self
    }

    fn page(self, page: &Page) -> Self {
        let call = match page.limit {
            Some(limit) => self.arg("limit", limit),
            None => self,
        };
        match &page.cursor {
            Some(cursor) => call.arg("cursor", cursor.as_str()),
            None => call,
        }
    }
}

impl AdminCommand {
    /// The call this command makes (none for `org purge`, the store's own).
    fn call(&self) -> Option<Call<'_>> {
        use AdminCommand as A;
        Some(match self {
            A::Org(OrgCommand::Purge { .. }) => return None,
            A::Org(OrgCommand::Create { global, name }) => {
                Call::new("org create", &org::NAME, global).arg("name", name.as_str())
            }
            A::OrgAdmin(OrgAdminCommand::Add { global, subject }) => {
                Call::new("org-admin add", &org::ADMIN_ADD, global).subject(subject)
            }
            A::OrgAdmin(OrgAdminCommand::Remove { global, subject }) => {
                Call::new("org-admin remove", &org::ADMIN_REMOVE, global).subject(subject)
            }
            A::OrgAdmin(OrgAdminCommand::List { global, page }) => {
                Call::new("org-admin list", &org::ADMINS, global).page(page)
            }
            A::Workspace(WorkspaceCommand::Create { global, name, slug }) => {
                Call::new("workspace create", &org::WORKSPACE_CREATE, global)
                    .arg("name", name.as_str())
                    .arg("slug", slug.as_str())
            }
            A::Workspace(WorkspaceCommand::List { global, page }) => {
                Call::new("workspace list", &org::WORKSPACES, global).page(page)
            }
            A::Workspace(WorkspaceCommand::Rename { global, workspace, name }) => {
                Call::new("workspace rename", &org::WORKSPACE_RENAME, global)
                    .workspace(workspace)
                    .arg("name", name.as_str())
            }
            A::Workspace(WorkspaceCommand::Shards { target, workspace, count }) => {
                Call::of("workspace shards", &org::WORKSPACE_SHARDS, target, false)
                    .workspace(workspace)
                    .arg("count", *count)
            }
            A::Workspace(WorkspaceCommand::Archive { global, workspace }) => {
                Call::new("workspace archive", &org::WORKSPACE_ARCHIVE, global).workspace(workspace)
            }
            A::Member(MemberCommand::Set { global, workspace, subject, role }) => {
                Call::new("member set", &org::MEMBER_SET, global)
                    .workspace(workspace)
                    .subject(subject)
                    .arg("role", role.as_str())
            }
            A::Member(MemberCommand::Remove(who)) => who.call("member remove", &org::MEMBER_REMOVE),
            A::Member(MemberCommand::List(list)) => list.call("member list", &org::MEMBERS),
            A::Pipeline(PipelineCommand::Register(who)) => who.call("pipeline register", &org::PIPELINE_REGISTER),
            A::Pipeline(PipelineCommand::Unregister(who)) => who.call("pipeline unregister", &org::PIPELINE_UNREGISTER),
            A::Pipeline(PipelineCommand::List(list)) => list.call("pipeline list", &org::PIPELINES),
        })
    }
}

/// `admin org purge`: every item of the organization but its audit records,
/// and every file, erased (`Store::purge_org`); the evidence on standard
/// output as JSON. Refused without `--yes` unless it is a dry run.
async fn purge(target: &Target, dry_run: bool, yes: bool) -> Result<(), Failure> {
    let by = acting_subject(target)?;
    if !dry_run && !yes {
        return Err(Failure::Usage(
            "org purge erases the organization's data for good: add --yes (or look first with --dry-run)".into(),
        ));
    }
    let config = crate::config::store_from_env().map_err(|e| Failure::Unavailable(e.to_string()))?;
    let store = Store::connect(&config).await;
    let at = crate::sys::now_string();
    let purge = store
        .purge_org(&target.org, dry_run)
        .await
        .map_err(|e| Failure::Unavailable(format!("the purge stopped (run it again to finish): {e}")))?;
    tracing::info!(org = %target.org, dry_run, by = %by, "organization purge");
    let evidence = serde_json::json!({
        "organization": target.org.as_str(), "dry_run": dry_run, "at": at, "by": by,
        "erased": if dry_run { Value::Null } else { serde_json::json!(purge.items) },
        "would_erase": if dry_run { serde_json::json!(purge.items) } else { Value::Null },
        "files": purge.files, "audit_records_kept": purge.audit_records_kept,
    });
    print(&format!("{}\n", serde_json::to_string_pretty(&evidence).unwrap_or_else(|_| evidence.to_string())))
}

/// How a parsed command ended other than done, and the exit code that says so.
enum Failure {
    /// The command line is wrong after all (the default `--as`): exit 2.
    Usage(String),
    Refused(String),
    Unavailable(String),
}

impl Failure {
    fn exit(self) -> ExitCode {
        let (code, message) = match self {
            Failure::Usage(m) => (2, m),
            Failure::Refused(m) => (3, m),
            Failure::Unavailable(m) => (4, m),
        };
        eprintln!("{}", message.trim_end());
        ExitCode::from(code)
    }
}

/// Who the audit trail names: `--as` (checked as it was parsed), or `cli:$USER`, held to
/// the same rules.
fn acting_subject(target: &Target) -> Result<String, Failure> {
    if let Some(named) = &target.acting {
        return Ok(named.clone());
    }
    let subject = format!("cli:{}", std::env::var("USER").unwrap_or_else(|_| "unknown".into()));
    match acting(&subject) {
        Ok(subject) if crate::domain::text::first_hidden(&subject).is_none() => Ok(subject),
        _ => Err(Failure::Usage(
            "--as: the default, cli:$USER, is not 1 to 255 characters without control or invisible characters; \
             name the subject with --as"
                .into(),
        )),
    }
}

/// Runs `admin <command>`; the exit code says how it ended (module docs).
pub async fn run(command: &AdminCommand) -> ExitCode {
    match execute(command).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.exit(),
    }
}

/// The command's answer on standard output (`sys::print_stdout`: a closed pipe is no failure).
fn print(text: &str) -> Result<(), Failure> {
    crate::sys::print_stdout(text).map_err(|e| Failure::Unavailable(format!("cannot write the answer: {e}")))
}

async fn execute(command: &AdminCommand) -> Result<(), Failure> {
    let Some(call) = command.call() else {
        return match command {
            AdminCommand::Org(OrgCommand::Purge { target, dry_run, yes }) => purge(target, *dry_run, *yes).await,
            _ => Err(Failure::Usage("this command calls no operation".into())),
        };
    };
    let subject = acting_subject(call.target)?;
    let config = crate::config::store_from_env().map_err(|e| Failure::Unavailable(e.to_string()))?;
    let store = Store::connect(&config).await;
    let store = if call.dry_run { store.dry_run() } else { store };
    let answer = invoke(&store, &subject, &call).await;
    if call.dry_run {
        let mut text = String::from(match (&answer, store.described_a_change()) {
            (_, true) => "dry run: nothing was written; the change would write:",
            (Ok(_), false) => {
                "dry run: nothing was written; nothing would change (the real run writes the call's audit record only):"
            }
            (Err(_), false) => {
                "dry run: nothing was written; the real run would be refused (and write the call's audit record only):"
            }
        });
        text.push('\n');
        for line in store.described_writes() {
            text.push_str(&format!("  {line}\n"));
        }
        print(&text)?;
    }
    match answer {
        Ok(body) => print(&format!("{}\n", serde_json::to_string_pretty(&body).unwrap_or_else(|_| body.to_string()))),
        Err(ApiError::Unavailable) => Err(Failure::Unavailable(
            "the table could not be reached (check TABLE_NAME, AWS_REGION and credentials)".into(),
        )),
        Err(error) => {
            let body = error.body();
            let field = |name: &str| body.pointer(&format!("/error/{name}")).and_then(Value::as_str).map(str::to_owned);
            let (code, message) =
                (field("code").unwrap_or_else(|| "error".into()), field("message").unwrap_or_default());
            Err(Failure::Refused(format!("{code}: {message}")))
        }
    }
}

/// The command's operation, called in-process as an organization administrator of
/// `--org`: the path from `--workspace` and `--subject`, the other flags as its arguments.
async fn invoke(store: &Store, subject: &str, call: &Call<'_>) -> Result<Value, ApiError> {
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret).map_err(|_| ApiError::Unavailable)?;
    let services = Services {
        store: store.clone(),
        // Cursors of this process's lists only.
        secrets: Arc::new(Secrets::new(&[crate::domain::hex(&secret)])),
        webhook_allow_loopback: false,
        memberships: crate::api::tenancy::MembershipCache::new(std::time::Duration::ZERO),
    };
    let org = call.target.org.clone();
    let scopes = Scopes::from_names([Scope::OrgAdmin.as_str()]);
    let principal = Principal::new("cli".into(), subject.to_owned(), org.clone(), scopes);
    let tenant = Tenant::organization(org);
    let request_id = crate::sys::new_id(crate::domain::ids::Kind::Event);
    let via = format!("admin {}", call.words);
    let origin = Origin { request_id: &request_id, surface: Surface::Cli, client: None, via: Some(&via) };
    let ctx = services.ctx(&principal, &tenant, origin);
    // The path flags: `--workspace` is the `{id}`, `--subject` the `{sub}`
    // (a command has each flag exactly where its operation has the parameter).
    let mut route = Route::new(call.op);
    for (param, value) in [(Param::Id, call.workspace), (Param::Sub, call.subject)] {
        if let Some(slot) = route.param_mut(param) {
            value.clone_into(slot);
        }
    }
    let response = api::invoke(&ctx, &Input::tool(&route, &call.args)).await?;
    Ok(response.body)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `admin <line>`, parsed: the command, or clap's error.
    fn parse_admin(line: &str) -> Result<AdminCommand, clap::Error> {
        let args = ["kobana-inbox-mcp", "admin"].into_iter().chain(line.split(' ').filter(|a| !a.is_empty()));
        let cli = command().try_get_matches_from(args).and_then(|m| Cli::from_arg_matches(&m))?;
        match cli.command {
            Some(Command::Admin(admin)) => Ok(admin),
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn commands_parse_their_flags_and_refuse_what_they_do_not_know() {
        let parsed = parse_admin("member set --org acme --workspace ws_1 --subject u1 --role admin").unwrap();
        let call = parsed.call().unwrap();
        assert_eq!((call.op, call.words, call.workspace, call.subject), (&org::MEMBER_SET, "member set", "ws_1", "u1"));
        assert_eq!(call.args.get("role"), Some(&Value::from("admin")));
        // A value may start with one hyphen, not two.
        let parsed = parse_admin("member remove --org acme --workspace ws_1 --subject -u1 --dry-run").unwrap();
        let call = parsed.call().unwrap();
        assert_eq!((call.subject, call.dry_run), ("-u1", true));
        for (line, wanted) in [
            (
                "member set --org acme --workspace ws_1 --subject u1",
                "required arguments were not provided:\n  --role <ROLE>",
            ),
            ("member set --org acme --colour red", "unexpected argument '--colour'"),
            ("member promote --org acme", "unrecognized subcommand 'promote'"),
            ("workspace list --org", "a value is required for '--org <ORG>'"),
            ("workspace rename --org acme --workspace ws_1 --name --dry-run", "--name needs a value"),
            ("workspace rename --org acme --workspace ws_1 --name=--dry-run", "--name needs a value"),
            ("workspace list --org acme --as --dry-run", "--as needs a value"),
            ("workspace list --org acme --limit ten", "--limit must be a whole number"),
            ("workspace list --org acme --org acme", "cannot be used multiple times"),
            ("workspace list --org acme!", "--org must be 1 to 64"),
            ("workspace shards --org acme --workspace ws_1 --count 4 --dry-run", "unexpected argument '--dry-run'"),
            ("workspace", "Usage: kobana-inbox-mcp admin workspace <COMMAND>"),
        ] {
            match parse_admin(line) {
                Err(e) => {
                    assert!(e.use_stderr() && e.exit_code() == 2, "{line}: {e}");
                    assert!(e.to_string().contains(wanted), "{line}: {e}");
                }
                Ok(parsed) => panic!("{line} parsed: {parsed:?}"),
            }
        }
    }

    #[test]
    fn help_asked_for_at_any_level_is_an_answer_not_an_error() {
        for (line, wanted, unwanted) in [
            ("--help", "workspace shards", ""),
            ("-h", "member set", ""),
            ("help", "org-admin add", ""),
            ("workspace --help", "rename", "member"),
            ("member set --help", "Usage: kobana-inbox-mcp admin member set [OPTIONS] --org <ORG>", ""),
            ("member set --org acme --help", "--role <ROLE>", ""),
            ("workspace shards -h", "--count <N>", "--dry-run"),
            ("workspace shards --help", "The count only grows", ""),
            ("help member set", "--subject <SUBJECT>", ""),
        ] {
            match parse_admin(line) {
                Err(e) if !e.use_stderr() && e.exit_code() == 0 => {
                    let text = e.to_string();
                    assert!(text.contains(wanted), "{line}: {text}");
                    assert!(unwanted.is_empty() || !text.contains(unwanted), "{line}: {text}");
                }
                other => panic!("{line}: not help: {other:?}"),
            }
        }
        assert!(parse_admin("frobnicate --help").is_err_and(|e| e.use_stderr()), "an unknown command stays an error");
        assert!(parse_admin("").is_err_and(|e| e.use_stderr() && e.exit_code() == 2), "no command is a usage error");
    }

    #[test]
    fn values_with_control_or_invisible_characters_are_refused_without_being_repeated() {
        for value in ["ops\nforged line", "ops\r", "ops\u{1b}[2J", "ops\u{2028}", "ops\u{202e}", "ops\u{200b}"] {
            let args = ["kobana-inbox-mcp", "admin", "workspace", "list", "--org", "acme", "--as", value];
            match command().try_get_matches_from(args) {
                Err(e) => {
                    let text = e.to_string();
                    assert!(text.contains("--as must not contain control characters"), "{text}");
                    assert!(!text.contains(value), "the refusal does not print the value: {text:?}");
                }
                Ok(_) => panic!("{value:?} accepted"),
            }
        }
        let parsed = parse_admin("workspace list --org acme --as ops@example").unwrap();
        assert_eq!(acting_subject(parsed.call().unwrap().target).ok().as_deref(), Some("ops@example"));
        assert!(parse_admin(&format!("workspace list --org acme --as {}", "x".repeat(256))).is_err());
    }

    /// Every administration command, as clap knows it, and its flags' names.
    fn leaves() -> Vec<(String, String, Vec<String>)> {
        let cmd = command();
        let admin = cmd.find_subcommand("admin").unwrap();
        let mut found = Vec::new();
        for group in admin.get_subcommands() {
            for leaf in group.get_subcommands() {
                let flags = leaf.get_arguments().filter_map(|a| a.get_long().map(str::to_owned)).collect();
                found.push((group.get_name().to_owned(), leaf.get_name().to_owned(), flags));
            }
        }
        found
    }

    #[test]
    fn every_command_calls_an_organization_operation_with_its_path_flags() {
        let leaves = leaves();
        assert_eq!(leaves.len(), 16);
        for (group, leaf, flags) in leaves {
            // The store's own, not an operation's (`purge`).
            if (group.as_str(), leaf.as_str()) == ("org", "purge") {
                let parsed = parse_admin("org purge --org acme --dry-run").unwrap();
                assert!(parsed.call().is_none());
                continue;
            }
            let mut line = format!("{group} {leaf}");
            for flag in flags.iter().filter(|f| !["help", "dry-run", "as"].contains(&f.as_str())) {
                line.push_str(&format!(
                    " --{flag} {}",
                    if ["limit", "count"].contains(&flag.as_str()) { "1" } else { "x" }
                ));
            }
            let parsed = parse_admin(&line).unwrap_or_else(|e| panic!("{line}: {e}"));
            let call = parsed.call().unwrap();
            assert_eq!(call.words, format!("{group} {leaf}"), "{line}");
            assert!(matches!(call.op.needs, crate::api::Needs::Org(_)), "{line}");
            assert_eq!(call.op.template.declares(Param::Id), !call.workspace.is_empty(), "{line}");
            assert_eq!(call.op.template.declares(Param::Sub), !call.subject.is_empty(), "{line}");
            assert!(!call.op.template.declares(Param::Sender), "{line}");
            assert_eq!(flags.contains(&"dry-run".to_owned()), call.op != &org::WORKSPACE_SHARDS, "{line}");
            let args: Vec<&String> = call.args.keys().collect();
            let expected: Vec<&String> = flags
                .iter()
                .filter(|f| !["help", "dry-run", "as", "org", "workspace", "subject"].contains(&f.as_str()))
                .collect();
            assert_eq!(args.len(), expected.len(), "{line}: every other flag is an argument: {args:?}");
        }
    }
}
