//! The local HTTP adapter: a hyper 1 server on loopback that turns each
//! request into the same `lambda_http::Request` the Lambda runtime produces
//! and calls the same `handle`. It reads at most one byte more than the body
//! limit, so an oversize body is answered 413 by the handler without being
//! buffered whole.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use crate::app::App;
use crate::mcp::MAX_BODY_BYTES;

/// Serve `app` on `listener` until `shutdown` completes.
pub async fn serve(listener: TcpListener, app: Arc<App>, shutdown: impl Future<Output = ()>) {
    tokio::pin!(shutdown);
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
        let app = Arc::clone(&app);
        tokio::spawn(async move {
            let service = service_fn(move |req| answer(Arc::clone(&app), req, peer));
            if let Err(error) = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await {
                tracing::debug!(%error, "connection ended with an error");
            }
        });
    }
}

async fn answer(
    app: Arc<App>,
    req: http::Request<Incoming>,
    _peer: SocketAddr,
) -> Result<http::Response<Full<Bytes>>, Infallible> {
    let (parts, mut incoming) = req.into_parts();
    let mut body = Vec::new();
    while body.len() <= MAX_BODY_BYTES {
        match incoming.frame().await {
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    body.extend_from_slice(&data);
                }
            }
            Some(Err(_)) | None => break,
        }
    }
    let request = lambda_http::Request::from_parts(parts, lambda_http::Body::Binary(body));
    let response = super::handle(&app, request).await;
    let (parts, body) = response.into_parts();
    let bytes = match body {
        lambda_http::Body::Text(text) => Bytes::from(text),
        lambda_http::Body::Binary(bytes) => Bytes::from(bytes),
        _ => Bytes::new(),
    };
    Ok(http::Response::from_parts(parts, Full::new(bytes)))
}

/// Serves one JSON document at `path` (and 404 elsewhere) until `shutdown`:
/// the development issuer's JWKS.
pub async fn serve_document(
    listener: TcpListener,
    path: &'static str,
    document: String,
    shutdown: impl Future<Output = ()>,
) {
    let document = Bytes::from(document);
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let Ok((stream, _)) = accepted else { continue };
        let document = document.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req: http::Request<Incoming>| {
                let document = document.clone();
                async move {
                    let found = req.uri().path() == path;
                    let mut response = http::Response::new(Full::new(if found { document } else { Bytes::new() }));
                    *response.status_mut() = if found { http::StatusCode::OK } else { http::StatusCode::NOT_FOUND };
                    response
                        .headers_mut()
                        .insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
                    Ok::<_, Infallible>(response)
                }
            });
            let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}
