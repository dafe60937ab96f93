"""The HTTP data service's authentication contract, shared by its server and its clients."""

from __future__ import annotations

# Read by `McpToolClient.url` and `livesearch serve-data` alike.
AUTH_TOKEN_ENV = "LIVESEARCH_DATA_SERVICE_TOKEN"
# The JSON-RPC error code of the HTTP data service's 401 body (the MCP SDK surfaces a JSON-RPC
# error sent with a non-2xx status as is). JSON-RPC leaves -32000..-32099 to implementations;
# the MCP SDK uses -32000, -32001, -32020..-32022 and -32042, so this one is ours alone.
UNAUTHORIZED_RPC_CODE = -32030
