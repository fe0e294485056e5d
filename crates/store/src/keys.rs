//! The single-table key design, in one place.
//!
//! Every partition key begins with the tenant — `T#{org}` — so a record of
//! another organization can never be addressed: ids from a request are only
//! ever appended to the caller's own tenant prefix. Components that come from
//! outside (a token's `sub`) are escaped so they cannot forge a separator.
//!
//! | Item | pk | sk |
//! |---|---|---|
//! | organization (name, workspace ids, archived ids, `org_admins` count) | `T#{org}` | `META` |
//! | workspace (with its `admins` count) | `T#{org}` | `WS#{ws}` |
//! | workspace slug reservation (one workspace per slug) | `T#{org}` | `WSSLUG#{slug}` |
//! | organization administrator, listed | `T#{org}` | `ORGADMIN#{sub}` |
//! | membership (role of a person in a workspace) | `T#{org}#U#{sub}` | `WS#{ws}` |
//! | ingestion client (a machine client that may ingest into a workspace) | `T#{org}#U#{sub}` | `INGEST#{ws}` |
//! | organization administrator (`org_admin`), checked | `T#{org}#U#{sub}` | `ORGADMIN` |
//!
//! A membership, a registration and an administrator are each written twice
//! in one transaction: under the person (what a request reads to resolve
//! its workspace or check its right) and under what they are about (what the
//! administration lists read: `MEMBER#` and `PIPELINE#` in the workspace's
//! partition, `ORGADMIN#` in the organization's).
//! | rate-limit window (one per person and minute) | `T#{org}#RL#{sub}` | `W#{window start, unix seconds}` |
//! | rate-limit window of a registered mail pipeline's ingestion (one per pipeline and minute) | `T#{org}#RLI#{sub}` | `W#{window start, unix seconds}` |
//!
//! Everything a workspace owns lives in its partition `T#{org}#W#{ws}` —
//! its write-heavy records in one of its write shards (`inbox_domain::shards`):
//! shard 0 is that partition itself, shard `n` is `T#{org}#W#{ws}#S{n}`. A
//! record made by id is in the shard its id names (`ids::shard_of`); an
//! idempotency record or single-use marker in the shard of its key's hash.
//!
//! | Item | partition | sk | gsi1pk / gsi1sk |
//! |---|---|---|---|
//! | inbox | workspace | `INB#{id}` | — |
//! | slug reservation (one inbox per slug) | workspace | `SLUG#{slug}` | — |
//! | allowed sender | workspace | `SND#{inbox}#{sender}` | — |
//! | e-mail | its shard | `EML#{id}` | `{shard}#EML` / `{received_at}#{id}` (removed on delete) |
//! | webhook | workspace | `WHK#{id}` | — |
//! | URL reservation (one webhook per URL) | workspace | `URL#{sha256(url)}` | — |
//! | delivery | its shard | `DLV#{id}` | `{shard}#WHK#{webhook}#DLV` / `{created_at}#{id}` |
//! | job | its shard | `JOB#{id}` | — |
//! | idempotency record | its key's shard | `IDEM#{sub}#{key}` | — |
//! | single-use marker (a consumed confirmation) | its key's shard | `ONCE#{key}` | — |
//! | audit record (kept 400 days) | its shard | `AUD#{id}` (ids sort by time) | — |
//! | member, listed | workspace | `MEMBER#{sub}` | — |
//! | mail pipeline registration, listed | workspace | `PIPELINE#{sub}` | — |
//!
//! Personal data (LGPD, `store::privacy`): the CPFs and CNPJs an e-mail
//! names are found when it is processed and indexed by their keyed digest
//! (HMAC-SHA-256 under the server's secret, never the number itself), twice:
//!
//! | Item | pk | sk |
//! |---|---|---|
//! | e-mail naming an identifier (what a data-subject request reads; 16 partitions by the e-mail's id) | `T#{org}#DS#{digest}#{0..15}` | `{ws}#{email id}` |
//! | identifier an e-mail names (what its erasure reads) | the e-mail's shard | `IDX#{email id}#{digest}` |
//! | data-subject request | `T#{org}` | `DSR#{id}` |
//! | a job or delivery that copied an e-mail (what its erasure empties) | the e-mail's shard | `CPY#{email id}#{JOB or DLV}#{id}` |
//!
//! No key is shared by tenants: on AWS the table's stream feeds the worker,
//! and the local runner finds queued jobs by scanning its local table.
//!
//! Lists that must be newest first (e-mails, deliveries) read `gsi1` backwards,
//! one query per shard, merged;
//! a soft-deleted e-mail loses its `gsi1` keys and so leaves the list without a
//! filter. Inboxes and webhooks are few per workspace and listed from the
//! base table with a filter on `deleted_at`.
//!
//! The development authorization server (`inbox::dev::oauth`, never deployed)
//! keeps its clients, codes and refresh tokens in partitions of their own,
//! `AUTHZ#{kind}#{id}` (see `store::authz`): the issuer's, not a tenant's.
//!
//! A Lambda container's first reads, at INIT (`Store::prime`), read
//! `PRIME#{random}` in both keys: a key of that container's own that nothing
//! writes, in no tenant's partition.
//!
//! Items that expire carry `expires_at` (unix seconds), the table's TTL
//! attribute; reads that care about expiry also compare it, because expiry is
//! lazy.

use inbox_domain::{OrgId, WorkspaceId};

pub const PK: &str = "pk";
pub const SK: &str = "sk";
pub const TTL: &str = "expires_at";
pub const GSI1: &str = "gsi1";
pub const GSI1_PK: &str = "gsi1pk";
pub const GSI1_SK: &str = "gsi1sk";

/// Escapes `%` and `#` so an outside value is one opaque key component.
pub fn escape(component: &str) -> String {
    component.replace('%', "%25").replace('#', "%23")
}

/// The key a container's priming reads name (pk and sk alike): `token`
/// is random per container.
pub fn prime(token: &str) -> String {
    format!("PRIME#{token}")
}

pub fn tenant(org: &OrgId) -> String {
    format!("T#{org}")
}

pub const ORG_META: &str = "META";

pub const WORKSPACE_PREFIX: &str = "WS#";

pub fn workspace_sk(ws: &WorkspaceId) -> String {
    format!("{WORKSPACE_PREFIX}{ws}")
}

/// The registration of a machine client as a workspace's mail pipeline.
pub fn ingest_sk(ws: &WorkspaceId) -> String {
    format!("{INGEST_PREFIX}{ws}")
}

pub const INGEST_PREFIX: &str = "INGEST#";

pub fn workspace_slug(slug: &str) -> String {
    format!("WSSLUG#{slug}")
}

/// The item under a person that makes them an organization administrator.
pub const ORG_ADMIN: &str = "ORGADMIN";

pub const ORG_ADMIN_PREFIX: &str = "ORGADMIN#";

/// An organization administrator, listed under the organization.
pub fn org_admin_listed(sub: &str) -> String {
    format!("{ORG_ADMIN_PREFIX}{}", escape(sub))
}

pub const MEMBER_PREFIX: &str = "MEMBER#";

/// A member, listed in the workspace's partition.
pub fn member_listed(sub: &str) -> String {
    format!("{MEMBER_PREFIX}{}", escape(sub))
}

pub const PIPELINE_PREFIX: &str = "PIPELINE#";

/// A mail pipeline registration, listed in the workspace's partition.
pub fn pipeline_listed(sub: &str) -> String {
    format!("{PIPELINE_PREFIX}{}", escape(sub))
}

pub fn member_pk(org: &OrgId, sub: &str) -> String {
    format!("T#{org}#U#{}", escape(sub))
}

/// A person's rate-limit windows: nothing in it comes from the request but
/// the verified token (a budget per made-up workspace id would be unbounded).
pub fn rate_pk(org: &OrgId, sub: &str) -> String {
    format!("T#{org}#RL#{}", escape(sub))
}

/// A registered mail pipeline's ingestion windows: a budget of its own, on
/// keys apart from the same subject's person budget (`rate_pk`).
pub fn ingestion_rate_pk(org: &OrgId, sub: &str) -> String {
    format!("T#{org}#RLI#{}", escape(sub))
}

/// Counter `counter` of a budget's windows (`pk`: `rate_pk` or
/// `ingestion_rate_pk`): counter 0 is `pk` itself, the others keys of their
/// own (`store::rate_limit`: a big budget is split).
pub fn rate_counter_pk(pk: String, counter: u32) -> String {
    if counter == 0 { pk } else { format!("{pk}#{counter}") }
}

pub fn rate_sk(window_start: u64) -> String {
    format!("W#{window_start}")
}

/// An item of the development authorization server.
pub fn authz(kind: &str, id: &str) -> String {
    format!("AUTHZ#{kind}#{}", escape(id))
}

/// The partition of everything a workspace owns.
pub fn ws(org: &OrgId, ws: &WorkspaceId) -> String {
    format!("T#{org}#W#{ws}")
}

/// Write shard `shard` of a workspace: shard 0 is its partition.
pub fn ws_shard(org: &OrgId, ws: &WorkspaceId, shard: u16) -> String {
    if shard == 0 { self::ws(org, ws) } else { format!("T#{org}#W#{ws}#S{shard}") }
}

pub fn inbox(id: &str) -> String {
    format!("INB#{id}")
}

pub fn slug(slug: &str) -> String {
    format!("SLUG#{slug}")
}

pub fn sender(inbox_id: &str, sender: &str) -> String {
    format!("SND#{inbox_id}#{}", escape(sender))
}

pub fn sender_prefix(inbox_id: &str) -> String {
    format!("SND#{inbox_id}#")
}

pub fn email(id: &str) -> String {
    format!("EML#{id}")
}

/// What a `Message-ID` ingested into an inbox became: its partition and sort
/// key, from its digest (a `Message-ID` may be up to 998 characters, a sort
/// key 1 KiB). The items live for ever, so their place must not depend on
/// the workspace's write shards, which change: they spread over
/// `MESSAGE_PARTITIONS` partitions of their own, chosen by the digest.
pub fn message(org: &OrgId, ws: &WorkspaceId, inbox_id: &str, message_id: &str) -> (String, String) {
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, message_id.as_bytes());
    let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    let partition = digest.as_ref().first().copied().unwrap_or(0) % MESSAGE_PARTITIONS;
    (format!("{}#MSG{partition}", self::ws(org, ws)), format!("MSG#{inbox_id}#{hex}"))
}

/// How many partitions a workspace's `Message-ID` items spread over (each
/// ingestion with a `Message-ID` writes one small item).
pub const MESSAGE_PARTITIONS: u8 = 16;

pub fn emails_index(ws_pk: &str) -> String {
    format!("{ws_pk}#EML")
}

pub fn webhook(id: &str) -> String {
    format!("WHK#{id}")
}

/// The reservation of a (normalised) webhook URL: its SHA-256, so any
/// length of URL makes a short key.
pub fn url_reservation(url: &str) -> String {
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, url.as_bytes());
    let hex = inbox_domain::hex(digest.as_ref());
    format!("URL#{hex}")
}

pub fn delivery(id: &str) -> String {
    format!("DLV#{id}")
}

pub fn deliveries_index(ws_pk: &str, webhook_id: &str) -> String {
    format!("{ws_pk}#WHK#{webhook_id}#DLV")
}

/// The e-mails of an organization that name one identifier (by its digest),
/// spread over `SUBJECT_PARTITIONS` partitions by the e-mail's id: the same
/// biller's CNPJ is on every bill it sends, and one partition per
/// identifier would be a hot key for a busy organization. A lookup reads
/// them all.
pub fn subject_index(org: &OrgId, digest: &str, part: u8) -> String {
    format!("T#{org}#DS#{digest}#{part}")
}

/// The partition of `subject_index` an e-mail's entry is in.
pub fn subject_part(email_id: &str) -> u8 {
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, email_id.as_bytes());
    digest.as_ref().first().copied().unwrap_or(0) % SUBJECT_PARTITIONS
}

pub const SUBJECT_PARTITIONS: u8 = 16;

pub fn subject_hit(ws: &WorkspaceId, email_id: &str) -> String {
    format!("{ws}#{email_id}")
}

/// An identifier an e-mail names (in the e-mail's partition).
pub fn email_identifier(email_id: &str, digest: &str) -> String {
    format!("{}{digest}", email_identifiers(email_id))
}

pub fn email_identifiers(email_id: &str) -> String {
    format!("IDX#{email_id}#")
}

/// A record that copied something of e-mail `email_id` (`kind` `JOB` or
/// `DLV`, its id), in the e-mail's partition: its erasure reads these
/// instead of every job and delivery of the workspace.
pub fn copy_ref(email_id: &str, kind: &str, id: &str) -> String {
    format!("{}{kind}#{id}", copy_refs(email_id))
}

pub fn copy_refs(email_id: &str) -> String {
    format!("CPY#{email_id}#")
}

pub const DATA_REQUEST_PREFIX: &str = "DSR#";

pub fn data_request(id: &str) -> String {
    format!("{DATA_REQUEST_PREFIX}{id}")
}

/// Every partition of an organization begins with this or is `tenant(org)`.
pub fn tenant_prefix(org: &OrgId) -> String {
    format!("T#{org}#")
}

pub const DELIVERY_PREFIX: &str = "DLV#";

pub const JOB_PREFIX: &str = "JOB#";

pub fn job(id: &str) -> String {
    format!("JOB#{id}")
}

pub fn idempotency(sub: &str, key: &str) -> String {
    format!("IDEM#{}#{}", escape(sub), escape(key))
}

pub fn once(key: &str) -> String {
    format!("ONCE#{}", escape(key))
}

/// An audit record; its id begins with its time, so the trail reads
/// newest first straight from the workspace partition.
pub fn audit(id: &str) -> String {
    format!("{AUDIT_PREFIX}{id}")
}

pub const AUDIT_PREFIX: &str = "AUD#";

/// `{timestamp}#{id}`: sorts by time, ties broken by id.
pub fn timeline(at: &str, id: &str) -> String {
    format!("{at}#{id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_values_cannot_forge_a_separator() {
        let org = OrgId::parse("org_a").unwrap();
        assert_eq!(member_pk(&org, "x#WS#y"), "T#org_a#U#x%23WS%23y");
        assert_ne!(member_pk(&org, "a%23b"), member_pk(&org, "a#b"));
    }

    #[test]
    fn a_pipelines_ingestion_budget_and_its_person_budget_never_share_a_key() {
        let org = OrgId::parse("org_a").unwrap();
        let (person, ingestion) = (rate_pk(&org, "svc_pipe"), ingestion_rate_pk(&org, "svc_pipe"));
        assert_eq!((person.as_str(), ingestion.as_str()), ("T#org_a#RL#svc_pipe", "T#org_a#RLI#svc_pipe"));
        for counter in 0..4 {
            assert_ne!(rate_counter_pk(person.clone(), counter), rate_counter_pk(ingestion.clone(), counter));
        }
        // A subject cannot name its way into the other budget's key.
        assert_ne!(rate_pk(&org, "x#RLI#svc_pipe"), ingestion);
    }
}
