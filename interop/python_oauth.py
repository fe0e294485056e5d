"""Interop test: the official Python MCP client logs in through the
development authorization server, as a client with no token would: it reads
the 401 challenge and the protected-resource metadata, registers itself
(dynamic client registration), sends the person through authorization with
PKCE (the server runs with AUTO_APPROVE, so the login page answers at once
with the redirect), exchanges the code, and then lists tools and calls one.
Reads MCP_URL; run by scripts/interop.sh. Prints
`interop python-oauth: N passed, N failed` and exits non-zero on a failure."""

import asyncio
import os
from urllib.parse import parse_qs, urlparse

import httpx2
from mcp import Client, types
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from checks import check, finish

URL = os.environ["MCP_URL"]
CALLBACK = "http://127.0.0.1:53127/callback"



class Memory:
    """Token storage in memory: this run's client and tokens."""

    def __init__(self):
        self.tokens, self.client = None, None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Browser:
    """Stands in for the person's browser: follows the authorization URL to
    the redirect the server answers with, and hands its parameters back."""

    def __init__(self):
        self.redirect = None

    async def open(self, authorization_url: str) -> None:
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
    auth = OAuthClientProvider(
        server_url=URL,
        client_metadata=OAuthClientMetadata(
            client_name="interop python oauth", redirect_uris=[CALLBACK],
            grant_types=["authorization_code", "refresh_token"], response_types=["code"],
            token_endpoint_auth_method="none", scope="inboxes:read emails:read"),
        storage=storage, redirect_handler=browser.open, callback_handler=browser.callback)
    async with httpx2.AsyncClient(auth=auth, headers={"X-Workspace-Id": "ws_main"}, timeout=30) as http:
        async with Client(streamable_http_client(URL, http_client=http), client_info=types.Implementation(
                name="interop-python-oauth", version="1")) as client:
            tools = await client.list_tools()
            names = [t.name for t in tools.tools]
            check("tools/list after logging in", "emails_list" in names, names)
            result = await client.call_tool("emails_list", {"limit": 1})
            check("tools/call emails_list", not result.is_error, result)
    check("registered by dynamic client registration", (storage.client and storage.client.client_id or "").startswith("dcr_"),
          storage.client)
    check("a refresh token was issued", bool(storage.tokens and storage.tokens.refresh_token), storage.tokens)
    check("the token says what it grants", "emails:read" in (storage.tokens.scope or "").split(), storage.tokens)


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except Exception as e:  # noqa: BLE001 - a failed login or call
        check("the login and the calls", False, f"{type(e).__name__}: {e!r}")
    finish("python-oauth")
