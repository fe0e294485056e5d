//! Long operations: the job runner and, for local runs, the poller that
//! feeds it. On AWS the worker Lambda (`src/bin/worker.rs`) calls the same
//! `run` for every new job item in the table's stream.
//!
//! Lifecycle: `queued → running → succeeded | failed`, or `queued →
//! cancelled` (`Store::cancel_job`): a cancelled job is never leased, so it
//! never runs. A failed job says why (`JobErrorKind`): the operation could
//! not be done, or the platform gave up on it. A runner claims a job
//! with a conditional write (`lease_job`), so a redelivered or duplicated
//! stream record finds it taken or finished and does nothing: the effect runs
//! once. The lease is time-bounded; a runner that died mid-job leaves a running job
//! whose lease lapses, and the next delivery takes it over. Transient storage
//! failures are retried in place with exponential backoff; after
//! `MAX_ATTEMPTS` the job fails with a readable error.
//!
//! Webhook deliveries are at-least-once: a runner that dies after sending
//! but before recording may send again; receivers deduplicate by event id.
//!
//! Extension jobs (`JobKind::Extension`: a kind the product does not
//! define, named by the job's `JobExtension::kind`) are run by the
//! `ExtensionJobs` registered for that kind in the runner's `Extensions`
//! (none in the product: such a job fails as an operation that cannot be
//! done). The worker knows nothing of what they do; a run ends like any
//! job's, or asks the client for input (`Step::Input`: the job waits,
//! `running` without a lease, until the answers put it back in the queue),
//! or stops because a cancellation was asked for while it ran
//! (`Step::Cancelled`, seen through `cancel_requested`). Its effect can also
//! fail outright as the platform's fault (`EffectError::Platform`), without
//! retries.
//!
//! A job of an archived workspace is ended, not run (`failed`, the operation
//! cannot be done), once the runner sees the archive: it reads the
//! organization's archived ids with the workspace's shards and keeps them
//! `SHARDS_CACHE_SECS`, the lifetime after which the API's containers refuse
//! the workspace's writes too. Not a read per job: the organization item is
//! the one key that cannot be split, and a read of it per job would make it
//! the busiest key of a busy organization (`tests/it/capacity.rs`).

pub mod effects;
pub mod privacy;
pub mod stream;

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Map, Value};

use inbox_domain::records::{Job, JobErrorKind, JobKind, JobStatus};
use inbox_domain::{OrgId, Shards, Tenant, WorkspaceId};
use inbox_outbound::Outbound;
use inbox_store::{Store, StoreError};
use inbox_support::secrets::Secrets;
use inbox_support::sys::now_string;

/// What running a job needs, built once per container: the store, the
/// server's secrets (to unseal webhook secrets) and the outbound client.
pub struct Runner {
    pub store: Store,
    pub secrets: Arc<Secrets>,
    pub outbound: Outbound,
    /// How long a lease protects a running job (`JOB_LEASE_SECS`).
    pub lease_secs: u64,
    /// What runs extension jobs, by kind (none in the product: an extension
    /// job there fails as an operation that cannot be done).
    pub extensions: Extensions,
    /// Each workspace's write shards, as last read (`SHARDS_CACHE_SECS`).
    pub shards: ShardsCache,
}

/// What one run of an extension job came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Finished: its result (for a job a tool started, that tool's
    /// `CallToolResult`, `isError` and all).
    Done(Value),
    /// It needs the client's input first: the input requests, by key.
    Input(Map<String, Value>),
    /// It saw a cancellation asked for while it ran, and stopped.
    Cancelled,
}

/// Runs the jobs of one extension kind.
pub trait ExtensionJobs: Send + Sync {
    /// One run of `job` (its subject, data and the answers so far are in
    /// `job.subject_id` and `job.extension`).
    fn run<'a>(
        &'a self,
        runner: &'a Runner,
        tenant: &'a Tenant,
        job: &'a Job,
    ) -> BoxFuture<'a, Result<Step, EffectError>>;
}

/// The extension kinds a deployment runs, each with what runs its jobs.
/// Registered by the composition root for a binary that serves another MCP
/// catalogue; empty in the product.
#[derive(Clone, Default)]
pub struct Extensions(Vec<(&'static str, Arc<dyn ExtensionJobs>)>);

impl Extensions {
    /// These, and `jobs` running the jobs of `kind`.
    #[must_use]
    pub fn with(mut self, kind: &'static str, jobs: Arc<dyn ExtensionJobs>) -> Self {
        self.0.push((kind, jobs));
        self
    }

    /// The kind registered under `kind`, and what runs it.
    fn find(&self, kind: &str) -> Option<(&'static str, &dyn ExtensionJobs)> {
        self.0.iter().find(|(name, _)| *name == kind).map(|(name, jobs)| (*name, jobs.as_ref()))
    }
}

/// Whether a cancellation was asked for while extension job `id` ran (or
/// the job is gone): a long job looks between its steps and stops.
pub async fn cancel_requested(runner: &Runner, tenant: &Tenant, id: &str) -> bool {
    match runner.store.get_job(tenant, id).await {
        Ok(Some(job)) => job.status == JobStatus::Cancelled || job.extension.is_some_and(|x| x.cancel_requested),
        Ok(None) => true,
        // Storage trouble is not a cancellation: look again next time.
        Err(_) => false,
    }
}

/// How long the runner keeps what it read of a workspace (its write shards,
/// whether it is archived): as long as the tenancy caches, well within the
/// delay before a raised count is written (`Shards::WRITE_DELAY_SECS`).
pub const SHARDS_CACHE_SECS: u64 = 30;

/// What the runner knows of the workspaces it has run jobs for. A job
/// arrives with its tenant's ids only (from the stream or the local scan);
/// the records it makes go to the workspace's shards like a request's, and
/// a job of an archived workspace is not run.
pub struct ShardsCache(inbox_support::expiring::Expiring<(OrgId, WorkspaceId), (Shards, bool)>);

impl Default for ShardsCache {
    fn default() -> Self {
        ShardsCache(inbox_support::expiring::Expiring::new(Duration::from_secs(SHARDS_CACHE_SECS)))
    }
}

impl Runner {
    /// `tenant` with its workspace's write shards and whether it is archived
    /// (one read of the organization when not cached).
    pub async fn with_shards(&self, tenant: &Tenant) -> Result<Tenant, StoreError> {
        let key = (tenant.org.clone(), tenant.workspace.clone());
        // `get` and `put`, not `get_or_load`: one more async layer in every
        // job's future is past the worker binary's type-depth limit.
        let (shards, archived) = match self.shards.0.get(&key) {
            Some(known) => known,
            None => {
                let org = self.store.org_workspaces(&tenant.org).await?;
                let shards = org.shards.get(&tenant.workspace).copied().unwrap_or_default();
                let known = (shards, org.archived.contains(&tenant.workspace));
                self.shards.0.put(key, known);
                known
            }
        };
        Ok(Tenant { shards, archived, ..tenant.clone() })
    }
}

pub const MAX_ATTEMPTS: u32 = 4;
/// The default lease: longer than any job takes (a delivery is bounded at 10 s).
pub const LEASE_SECS: u64 = 120;

/// What running a job came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Ran {
    /// Finished (succeeded or failed) by this runner.
    Finished(JobStatus),
    /// Finished or cancelled before, or no such job; nothing was done.
    Skipped,
    /// Running under someone else's live lease — another runner, or a lease
    /// write that timed out here but was applied. Nothing was done; deliver
    /// it again later (the lease lapses, then it runs).
    Busy,
    /// An extension job that now waits for the client's input.
    AwaitingInput,
}

/// A job's effect failed.
#[derive(Debug, thiserror::Error)]
pub enum EffectError {
    /// Worth retrying (storage throttled or unavailable).
    #[error(transparent)]
    Transient(StoreError),
    /// Will not get better (the subject is gone, the data is corrupt).
    #[error("{0}")]
    Permanent(String),
    /// The service failed to run it, and retrying here will not help
    /// (`JobErrorKind::Platform` at once).
    #[error("{0}")]
    Platform(String),
}

impl From<StoreError> for EffectError {
    /// Storage errors reach clients (a job's `error`, `tasks/get`) as one
    /// sentence; the error itself goes to the log.
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Throttled | StoreError::Unavailable(_) => EffectError::Transient(e),
            other => {
                tracing::error!(error = %other, "a job's data could not be used");
                EffectError::Permanent("the data this job needs could not be read".into())
            }
        }
    }
}

/// Runs job `id` of `tenant` once: lease, effect (retried on transient
/// failures), record the outcome. An error means the outcome could not be
/// recorded; the caller should let the job be delivered again.
pub async fn run(runner: &Runner, tenant: &Tenant, id: &str) -> Result<Ran, StoreError> {
    let tenant = &runner.with_shards(tenant).await?;
    let Some(mut job) = runner.store.lease_job(tenant, id, runner.lease_secs).await? else {
        return Ok(match runner.store.get_job(tenant, id).await? {
            Some(job) if job.status == JobStatus::Running => Ran::Busy,
            _ => Ran::Skipped,
        });
    };
    let started = std::time::Instant::now();
    let outcome = if tenant.archived {
        tracing::info!(job = %job.id, workspace = %tenant.workspace, "the job's workspace is archived: ended, not run");
        Err((JobErrorKind::Operation, "the workspace was archived: an archived workspace runs no jobs".to_owned()))
    } else {
        run_effect(runner, tenant, &mut job).await
    };
    let ran = finish(runner, tenant, &mut job, outcome).await?;
    if let Ran::Finished(_) = ran {
        job_metrics(runner, tenant, &job, started.elapsed());
    }
    Ok(ran)
}

/// The job's effect, its transient failures retried in place.
async fn run_effect(runner: &Runner, tenant: &Tenant, job: &mut Job) -> Result<Step, (JobErrorKind, String)> {
    let mut backoff = Duration::from_millis(200);
    loop {
        let step = match job.kind {
            JobKind::Extension => match job.extension.as_ref().and_then(|x| runner.extensions.find(&x.kind)) {
                Some((_, jobs)) => jobs.run(runner, tenant, job).await,
                None => Err(EffectError::Permanent("this deployment runs no jobs of this kind".into())),
            },
            _ => effects::apply(runner, tenant, job).await.map(Step::Done),
        };
        match step {
            Ok(step) => return Ok(step),
            Err(EffectError::Permanent(why)) => return Err((JobErrorKind::Operation, why)),
            Err(EffectError::Platform(why)) => return Err((JobErrorKind::Platform, why)),
            Err(EffectError::Transient(e)) if job.attempts >= MAX_ATTEMPTS => {
                // The storage error chain is for the log, not for clients.
                tracing::error!(job = %job.id, attempts = job.attempts, error = %e, "job gave up");
                return Err((
                    JobErrorKind::Platform,
                    format!("the service could not complete this job after {} attempts; run it again", job.attempts),
                ));
            }
            Err(EffectError::Transient(e)) => {
                tracing::warn!(job = %job.id, attempt = job.attempts, error = %e, "transient failure; retrying");
                tokio::time::sleep(backoff).await;
                backoff *= 2;
                job.attempts += 1;
            }
        }
    }
}

/// One EMF line per finished job: `Jobs`, `JobAttempts` and `JobDuration`,
/// by kind (an extension job's own kind, when the runner has it registered:
/// a name from code, never from a client) and outcome (`succeeded`,
/// `failed_operation`, `failed_platform`; `cancelled` for an extension job
/// that stopped when asked).
fn job_metrics(runner: &Runner, tenant: &Tenant, job: &Job, elapsed: Duration) {
    let outcome = match (job.status, job.error_kind) {
        (JobStatus::Succeeded, _) => JobStatus::Succeeded.as_str(),
        (JobStatus::Cancelled, _) => JobStatus::Cancelled.as_str(),
        (_, Some(JobErrorKind::Operation)) => "failed_operation",
        _ => "failed_platform",
    };
    let registered = job.extension.as_ref().and_then(|x| runner.extensions.find(&x.kind)).map(|(kind, _)| kind);
    let kind = Value::from(registered.unwrap_or(job.kind.as_str()));
    inbox_support::telemetry::Emf {
        dimensions: &[&["JobKind", "Outcome"]],
        metrics: &[
            ("Jobs", "Count", 1.0),
            ("JobAttempts", "Count", f64::from(job.attempts)),
            ("JobDuration", "Milliseconds", elapsed.as_secs_f64() * 1000.0),
        ],
        properties: &[
            ("JobKind", kind),
            ("Outcome", Value::from(outcome)),
            ("JobId", Value::from(job.id.as_str())),
            ("Workspace", Value::from(tenant.workspace.as_str())),
            ("Org", Value::from(tenant.org.as_str())),
        ],
    }
    .emit();
}

async fn finish(
    runner: &Runner,
    tenant: &Tenant,
    job: &mut Job,
    outcome: Result<Step, (JobErrorKind, String)>,
) -> Result<Ran, StoreError> {
    match outcome {
        Ok(Step::Done(result)) => {
            job.status = JobStatus::Succeeded;
            job.result = Some(result);
            job.error = None;
            job.error_kind = None;
        }
        Ok(Step::Input(requests)) => {
            // Waits: running, without a lease, until the answers queue it again.
            if let Some(extension) = job.extension.as_mut() {
                extension.awaiting = requests;
            }
            job.lease_until = None;
            job.updated_at = now_string();
            runner.store.put_job(tenant, job).await?;
            tracing::info!(job = %job.id, "job waits for input");
            return Ok(Ran::AwaitingInput);
        }
        Ok(Step::Cancelled) => job.status = JobStatus::Cancelled,
        Err((kind, error)) => {
            job.status = JobStatus::Failed;
            job.error = Some(error);
            job.error_kind = Some(kind);
        }
    }
    job.lease_until = None;
    // A finished job is doing nothing: its last stage goes.
    job.stage = None;
    job.updated_at = now_string();
    runner.store.put_job(tenant, job).await?;
    tracing::info!(job = %job.id, kind = ?job.kind, status = ?job.status, "job finished");
    Ok(Ran::Finished(job.status))
}

/// Local mode: runs queued jobs as they appear, until the process ends. A
/// job is left queued until it is `hold` old (`LOCAL_JOB_HOLD_MS`; zero by
/// default): time for a person, or a test, to see it queued and cancel it.
pub async fn poll(runner: Arc<Runner>, every: Duration, hold: Duration) {
    poll_jobs(runner, every, hold, false).await;
}

/// `poll`, each job on a task of its own: a long job (an extension job may
/// run for a minute, or wait for input) does not hold up the jobs queued
/// after it. A job is still run once (`lease_job`).
pub async fn poll_concurrently(runner: Arc<Runner>, every: Duration, hold: Duration) {
    poll_jobs(runner, every, hold, true).await;
}

async fn poll_jobs(runner: Arc<Runner>, every: Duration, hold: Duration, concurrently: bool) {
    loop {
        match runner.store.queued_jobs(25).await {
            Ok(jobs) => {
                let now = inbox_support::sys::now();
                // A creation time that does not parse does not hold its job back.
                let held =
                    |created_at: &str| inbox_domain::clock::parse_instant(created_at).is_some_and(|at| now - at < hold);
                for (tenant, id, _) in jobs.into_iter().filter(|(_, _, created_at)| !held(created_at)) {
                    let runner = Arc::clone(&runner);
                    let job = async move {
                        if let Err(e) = run(runner.as_ref(), &tenant, &id).await {
                            tracing::warn!(job = %id, error = %e, "job could not be recorded; it stays queued");
                        }
                    };
                    if concurrently {
                        tokio::spawn(job);
                    } else {
                        job.await;
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "cannot read the job queue"),
        }
        match runner.store.queued_data_requests().await {
            Ok(requests) => {
                for (org, id) in requests {
                    if let Err(e) = privacy::run_data_request(runner.as_ref(), &org, &id).await {
                        tracing::warn!(request = %id, error = %e, "data request could not be recorded; it stays queued");
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "cannot read the data requests queue"),
        }
        tokio::time::sleep(every).await;
    }
}
