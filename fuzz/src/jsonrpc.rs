//! The strict JSON-RPC parser: any bytes. Invariants: a refusal is 400 with
//! -32700 (not JSON) or -32600 (not one request), never a panic; whatever it
//! accepts is JSON that serde_json reads too, and its id (if any) is a string
//! or an integer. (An empty method name is a string: it is accepted here and
//! answered -32601 by method resolution, as any unknown name.)

use inbox::mcp::jsonrpc::parse_message;

/// The invariants on one input (panics when one is broken).
pub fn check(data: &[u8]) {
    match parse_message(data) {
        Ok(message) => {
            assert!(serde_json::from_slice::<serde_json::Value>(data).is_ok(), "accepted what is not JSON");
            let id_ok = message.id.as_ref().is_none_or(|id| id.is_string() || id.is_i64() || id.is_u64());
            assert!(id_ok, "id {:?}", message.id);
        }
        Err(failure) => {
            assert_eq!(failure.error.status.as_u16(), 400, "status {}", failure.error.status);
            assert!(matches!(failure.error.code.0, -32700 | -32600), "code {}", failure.error.code.0);
        }
    }
}
