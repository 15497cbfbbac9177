"""The asyncio agent worker: model gateways, tools, the approval gate, the turn loop, resume."""
