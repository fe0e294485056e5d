"""Interop test: the official Python MCP client logs in through the
development authorization server, as a client with no token would: it reads
the 401 challenge and the protected-resource metadata, presents a Client ID
Metadata Document (served here over https on loopback, with the test
authority of scripts/interop.sh, which the server is told to trust), sends
the person through authorization with PKCE (the server runs with
AUTO_APPROVE, so the login page answers at once with the redirect),
exchanges the code, lists tools and calls one; then, its access token expired
(the server runs with short-lived tokens), it refreshes and calls again.
Reads MCP_URL, CLIENT_DOCUMENT_CERT, CLIENT_DOCUMENT_KEY and
DEV_ACCESS_TOKEN_SECS; run by scripts/interop.sh. Prints
`interop python-oauth: N passed, N failed` and exits non-zero on a failure."""

import asyncio
import json
import os
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import httpx2
from mcp import Client, types
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from checks import check, finish

URL = os.environ["MCP_URL"]
CALLBACK = "http://127.0.0.1:53127/callback"
TOKEN_SECS = int(os.environ.get("DEV_ACCESS_TOKEN_SECS", "3600"))


def serve_client_document() -> tuple[str, list[str]]:
    """Serves this client's metadata document over https on loopback; its URL
    (the client id), and a list the server's fetches are counted in."""
    fetched: list[str] = []

    class Document(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the http.server interface
            fetched.append(self.path)
            body = json.dumps({
                "client_id": url, "client_name": "interop python oauth (client document)",
                "redirect_uris": [CALLBACK], "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"], "token_endpoint_auth_method": "none"}).encode()
            self.send_response(200 if self.path == "/clients/python.json" else 404)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Document)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(os.environ["CLIENT_DOCUMENT_CERT"], os.environ["CLIENT_DOCUMENT_KEY"])
    server.socket = context.wrap_socket(server.socket, server_side=True)
    url = f"https://127.0.0.1:{server.server_address[1]}/clients/python.json"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return url, fetched



class Memory:
    """Token storage in memory: this run's client and tokens."""

    def __init__(self):
        self.tokens, self.client, self.issued = None, None, []

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens
        self.issued.append(tokens)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Browser:
    """Stands in for the person's browser: follows the authorization URL to
    the redirect the server answers with, and hands its parameters back."""

    def __init__(self):
        self.redirect, self.logins = None, 0

    async def open(self, authorization_url: str) -> None:
        self.logins += 1
        async with httpx2.AsyncClient(timeout=30) as http:
            answer = await http.get(authorization_url)
        self.redirect = answer.headers.get("location")
        check("authorization answers with a redirect to the callback", answer.status_code == 302
              and (self.redirect or "").startswith(CALLBACK), f"{answer.status_code} {answer.text[:200]}")

    async def callback(self) -> AuthorizationCodeResult:
        query = parse_qs(urlparse(self.redirect or "").query)
        check("the redirect carries iss (RFC 9207)", "iss" in query, self.redirect)
        return AuthorizationCodeResult(code=query["code"][0], state=query.get("state", [None])[0],
                                       iss=query.get("iss", [None])[0])


async def main():
    storage, browser = Memory(), Browser()
    document_url, fetched = serve_client_document()
    auth = OAuthClientProvider(
        server_url=URL,
        client_metadata=OAuthClientMetadata(
            client_name="interop python oauth", redirect_uris=[CALLBACK],
            grant_types=["authorization_code", "refresh_token"], response_types=["code"],
            token_endpoint_auth_method="none", scope="inboxes:read emails:read"),
        storage=storage, redirect_handler=browser.open, callback_handler=browser.callback,
        client_metadata_url=document_url)
    async with httpx2.AsyncClient(auth=auth, headers={"X-Workspace-Id": "ws_main"}, timeout=30) as http:
        async with Client(streamable_http_client(URL, http_client=http), client_info=types.Implementation(
                name="interop-python-oauth", version="1")) as client:
            tools = await client.list_tools()
            names = [t.name for t in tools.tools]
            check("tools/list after logging in", "emails_list" in names, names)
            result = await client.call_tool("emails_list", {"limit": 1})
            check("tools/call emails_list", not result.is_error, result)
            check("a refresh token was issued", bool(storage.tokens and storage.tokens.refresh_token), storage.tokens)
            first = storage.tokens
            # The access token expires; the client refreshes it before its next call.
            await asyncio.sleep(TOKEN_SECS + 1)
            result = await client.call_tool("inboxes_list", {})
            check("tools/call after the access token expired", not result.is_error, result)
            last = storage.tokens
            check("the client refreshed (no second login)", len(storage.issued) == 2 and browser.logins == 1,
                  f"{len(storage.issued)} token responses, {browser.logins} logins")
            check("the refresh rotated both tokens", bool(first and last) and last.access_token != first.access_token
                  and last.refresh_token != first.refresh_token, (first, last))
    check("the client id is its metadata document's URL", storage.client and storage.client.client_id == document_url,
          storage.client)
    check("the server fetched the client document over https", "/clients/python.json" in fetched, fetched)
    check("the token says what it grants", "emails:read" in (storage.tokens.scope or "").split(), storage.tokens)


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except Exception as e:  # noqa: BLE001 - a failed login or call
        check("the login and the calls", False, f"{type(e).__name__}: {e!r}")
    finish("python-oauth")
