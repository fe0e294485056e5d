//! The local HTTP adapter: a hyper 1 server on loopback that turns each
//! request into the same `lambda_http::Request` the Lambda runtime produces
//! and calls the same `handle`.
//!
//! API Gateway only ever hands over whole bodies; a socket does not, so this
//! adapter makes the same promise before it calls the handler:
//! - a body that ends early (the peer closed before `Content-Length` bytes)
//!   or is malformed (a bad chunk header) is refused with 400 and never
//!   reaches an operation;
//! - headers must arrive within `HEADER_READ_TIMEOUT` (the connection is
//!   closed otherwise) and the body within `BODY_READ_TIMEOUT` (408);
//! - a declared `Content-Length` over the limit is answered 413 at once,
//!   without reading the body, and a chunked body is read to at most one
//!   byte over the limit, so an oversize body is never buffered whole.
//!
//! When its last client disconnects, the server hands the memory its
//! allocator holds free back to the kernel (`sys::release_free_memory`):
//! under load the allocator keeps freed pages a while for the next requests.

use http::StatusCode;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;

use super::Edge;

/// How long a client may take to send its headers, then its body.
#[derive(Debug, Clone, Copy)]
pub struct ReadTimeouts {
    pub headers: Duration,
    pub body: Duration,
}

impl Default for ReadTimeouts {
    fn default() -> Self {
        ReadTimeouts { headers: HEADER_READ_TIMEOUT, body: BODY_READ_TIMEOUT }
    }
}

/// Serve `edge` on `listener` until `shutdown` completes.
pub async fn serve(listener: TcpListener, edge: Arc<Edge>, shutdown: impl Future<Output = ()>) {
    serve_with(listener, edge, shutdown, ReadTimeouts::default()).await;
}

/// `serve` with other read timeouts.
pub async fn serve_with(
    listener: TcpListener,
    edge: Arc<Edge>,
    shutdown: impl Future<Output = ()>,
    timeouts: ReadTimeouts,
) {
    serve_fronted(listener, edge, shutdown, timeouts, None).await;
}

/// What a development front does to each request's headers before the
/// handler sees them (the conformance fixture server adds a development
/// token to requests that carry none: `crate::conformance`).
pub type Front = Arc<dyn Fn(&mut http::HeaderMap) + Send + Sync>;

/// `serve_with`, each request's headers first passed through `front`.
pub async fn serve_fronted(
    listener: TcpListener,
    edge: Arc<Edge>,
    shutdown: impl Future<Output = ()>,
    timeouts: ReadTimeouts,
    front: Option<Front>,
) {
    tokio::pin!(shutdown);
    let open = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let (stream, peer) = match accepted {
            Ok(pair) => pair,
            Err(error) => {
                tracing::warn!(%error, "accept failed");
                continue;
            }
        };
        let edge = Arc::clone(&edge);
        let front = front.clone();
        let connection = Connection::open(&open);
        tokio::spawn(async move {
            let _connection = connection;
            let service = service_fn(move |mut req: http::Request<Incoming>| {
                if let Some(front) = &front {
                    front(req.headers_mut());
                }
                answer(Arc::clone(&edge), req, peer, timeouts.body)
            });
            let mut builder = http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(timeouts.headers)
                .max_headers(MAX_HEADERS)
                .max_buf_size(2 * MAX_HEAD_BYTES);
            if let Err(error) = builder.serve_connection(TokioIo::new(stream), service).await {
                tracing::debug!(%error, "connection ended with an error");
            }
        });
    }
}

/// One open client connection, counted in the server's `open` while it lives
/// (its task ends or is dropped).
struct Connection(Arc<std::sync::atomic::AtomicUsize>);

impl Connection {
    fn open(count: &Arc<std::sync::atomic::AtomicUsize>) -> Connection {
        count.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        Connection(Arc::clone(count))
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // The last one: no request is in flight, and none is coming until a
        // client connects again. A client that connects for every request
        // pays this on each: a few microseconds, within the noise of a
        // `server/discover` over a new connection (~130 µs of CPU).
        if self.0.fetch_sub(1, std::sync::atomic::Ordering::AcqRel) == 1 {
            crate::sys::release_free_memory();
        }
    }
}

/// The most header fields a request may carry (more: 431, nothing runs).
pub const MAX_HEADERS: usize = 64;
/// The most bytes the header fields may take, each counted as `name: value`
/// with its line end (more: 431, `headers_too_large`).
pub const MAX_HEAD_BYTES: usize = 64 * 1024;

/// How long a client may take to send its request line and headers.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client may take to send its body once the headers are in.
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a body could not be taken whole.
enum BodyFault {
    /// Cut off or malformed framing.
    Incomplete,
    TimedOut,
}

async fn answer(
    edge: Arc<Edge>,
    req: http::Request<Incoming>,
    _peer: SocketAddr,
    body_timeout: Duration,
) -> Result<http::Response<Full<Bytes>>, Infallible> {
    let (parts, incoming) = req.into_parts();
    // Header fields past MAX_HEAD_BYTES (names, values and separators): 431.
    // hyper's read buffer is the outer guard and is not exact; this is.
    let head_bytes: usize = parts.headers.iter().map(|(name, value)| name.as_str().len() + value.len() + 4).sum();
    if head_bytes > MAX_HEAD_BYTES {
        tracing::info!(head_bytes, "request headers too large; refused");
        let mut response = http::Response::new(Full::new(Bytes::from_static(
            br#"{"error":{"code":"headers_too_large","message":"The request headers exceed 65536 bytes"}}"#,
        )));
        *response.status_mut() = http::StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE;
        let headers = response.headers_mut();
        headers.insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
        headers.insert(http::header::CONNECTION, http::HeaderValue::from_static("close"));
        return Ok(response);
    }
    let declared = parts
        .headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    // Over the limit by its own account: the handler answers 413 from the
    // header alone, so the body is not waited for.
    let limit = crate::gate::read_limit(&parts.headers, parts.uri.path());
    let oversize = declared.is_some_and(|n| n > limit as u64);
    let body = if oversize {
        Ok(Vec::new())
    } else {
        match tokio::time::timeout(body_timeout, read_body(incoming, limit)).await {
            Ok(read) => read,
            Err(_) => Err(BodyFault::TimedOut),
        }
    };
    let response = match body {
        Ok(body) => {
            let request = lambda_http::Request::from_parts(parts, lambda_http::Body::Binary(body));
            let mut response = super::handle(&edge, request).await;
            if oversize {
                // The unread body must not be taken for the next request.
                response.headers_mut().insert(http::header::CONNECTION, http::HeaderValue::from_static("close"));
            }
            response
        }
        Err(fault) => {
            let (status, message) = match fault {
                BodyFault::Incomplete => (StatusCode::BAD_REQUEST, "The request body ended early or was malformed"),
                BodyFault::TimedOut => (StatusCode::REQUEST_TIMEOUT, "The request body did not arrive in time"),
            };
            tracing::info!(status = status.as_u16(), path = %super::logged_path(parts.uri.path()), "request body unreadable; refused");
            let mut response = super::unreadable_body(parts.uri.path(), status, message);
            response.headers_mut().insert(http::header::CONNECTION, http::HeaderValue::from_static("close"));
            response
        }
    };
    let (parts, body) = response.into_parts();
    let bytes = match body {
        lambda_http::Body::Text(text) => Bytes::from(text),
        lambda_http::Body::Binary(bytes) => Bytes::from(bytes),
        _ => Bytes::new(),
    };
    Ok(http::Response::from_parts(parts, Full::new(bytes)))
}

/// Reads the body to its end, or to one byte past `limit` (the handler
/// then answers 413). A framing error is never taken for the end.
async fn read_body(mut incoming: Incoming, limit: usize) -> Result<Vec<u8>, BodyFault> {
    let mut body = Vec::new();
    while body.len() <= limit {
        match incoming.frame().await {
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    body.extend_from_slice(&data);
                }
            }
            Some(Err(_)) => return Err(BodyFault::Incomplete),
            None => break,
        }
    }
    Ok(body)
}

/// What `serve_fn` calls for each request: a whole request, a whole answer.
pub type Handler = Arc<
    dyn Fn(http::Request<Bytes>) -> std::pin::Pin<Box<dyn Future<Output = http::Response<Bytes>> + Send>> + Send + Sync,
>;

/// Serves `handler` on loopback until `shutdown`, with the same body
/// discipline as the server's port (bounded, whole bodies only): the
/// development authorization server.
pub async fn serve_fn(listener: TcpListener, handler: Handler, shutdown: impl Future<Output = ()>) {
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let Ok((stream, _)) = accepted else { continue };
        let handler = Arc::clone(&handler);
        tokio::spawn(async move {
            let service = service_fn(move |req: http::Request<Incoming>| {
                let handler = Arc::clone(&handler);
                async move {
                    let (parts, incoming) = req.into_parts();
                    let answer = match read_body(incoming, crate::gate::MAX_BODY_BYTES).await {
                        Ok(body) => handler(http::Request::from_parts(parts, Bytes::from(body))).await,
                        Err(_) => {
                            let mut refused = http::Response::new(Bytes::new());
                            *refused.status_mut() = StatusCode::BAD_REQUEST;
                            refused
                        }
                    };
                    Ok::<_, Infallible>(answer.map(Full::new))
                }
            });
            let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}
