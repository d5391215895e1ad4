"""Control calls: help, stop, uptime, getrpcinfo, echo, setmocktime, ZMQ info (the network
calls are ``rpc.methods.network``)."""

from __future__ import annotations

import threading
import time
from typing import Any

from rpc.context import Call
from rpc.errors import RpcCode, RpcError
from rpc.registry import REGISTRY, Kind, Locking, optional, required, rpc

STOP_MESSAGE = "ctplugin stopping"


@rpc("control", args=[optional("command", Kind.STR, description="The command to get help on",
                               default_doc="all commands")],
     description="List all commands, or get help for a specified command.",
     result='"text"    (string) The help text', locking=Locking.SELF,
     examples=("", '"getblockcount"'))
def help(call: Call, command: str | None) -> str:
    if command is None:
        return REGISTRY.overview()
    method = REGISTRY.get(command)
    if method is None:
        return f"help: unknown command: {command}"
    return method.help_text()


@rpc("control", args=[optional("wait", Kind.INT, description="how long to wait in ms")],
     description="Request a graceful shutdown of the node.",
     result='"str"    (string) A string with the content \'ctplugin stopping\'',
     locking=Locking.SELF,
     examples=("",))
def stop(call: Call, wait: int | None) -> str:
    # The reply still goes out: the server only stops taking new requests from here on.
    if wait:
        time.sleep(min(wait, 60_000) / 1000)
    threading.Thread(target=call.context.request_shutdown, name="stop", daemon=True).start()
    return STOP_MESSAGE


@rpc("control", description="Returns the total uptime of the server.",
     result="ttt    (numeric) The number of seconds that the server has been running",
     locking=Locking.SELF,
     examples=("",))
def uptime(call: Call) -> int:
    return int(time.time() - call.context.started)


@rpc("control", description="Returns details of the RPC server.", locking=Locking.SELF,
     result='{\n'
            '  "active_commands" : [   (json array) All active commands\n'
            '    {\n'
            '      "method" : "str",   (string) The name of the RPC command\n'
            '      "duration" : n      (numeric) The running time in microseconds\n'
            '    },\n'
            '    ...\n'
            '  ],\n'
            '  "logpath" : "str"     (string) The complete file path to the debug log\n'
            '}',
     examples=("",))
def getrpcinfo(call: Call) -> dict[str, Any]:
    return {"active_commands": call.context.active_commands(), "logpath": call.context.logpath}


_ECHO_ARGS = [optional(f"arg{i}", Kind.ANY, None, "Any JSON value, echoed back")
              for i in range(10)]


@rpc("hidden", args=_ECHO_ARGS, hidden=True, locking=Locking.SELF,
     description="Simply echo back the input arguments. This command is for testing.",
     result='[ any, ... ]    (json array) the arguments, trailing nulls left out',
     examples=('"hello" 1',))
def echo(call: Call, *args: Any) -> list[Any]:
    values = list(args)
    while values and values[-1] is None:
        values.pop()
    return values


@rpc("hidden", args=_ECHO_ARGS, hidden=True, locking=Locking.SELF,
     description="Echo back the input arguments (parsed as JSON by ctplugin cli).",
     result='[ any, ... ]    (json array) the arguments, trailing nulls left out',
     examples=('\'{"a": 1}\'',))
def echojson(call: Call, *args: Any) -> list[Any]:
    return echo(call, *args)


@rpc("hidden", hidden=True, locking=Locking.SELF,
     description="Waits for the validation interface queue to catch up (events are delivered "
                 "synchronously here, so it returns at once).",
     result='null    (json null)',
     examples=("",))
def syncwithvalidationinterfacequeue(call: Call) -> None:
    return None


MAX_MOCKTIME = 2**63 // 1_000_000_000  # Core: seconds that still fit in nanoseconds


@rpc("hidden", args=[required("timestamp", Kind.INT, "Unix seconds timestamp, 0 to go back to "
                              "the current time")],
     description="Set the local time to given timestamp (-regtest only). New blocks from "
                 "generatetoaddress, generateblock and getnewblockhex carry it (at least the "
                 "median time past + 1).", hidden=True, locking=Locking.SELF,
     result='null    (json null)',
     examples=('1700000000',))
def setmocktime(call: Call, timestamp: int) -> None:
    if timestamp < 0:
        raise RpcError(RpcCode.INVALID_PARAMETER, f"Mocktime cannot be negative: {timestamp}.")
    if timestamp > MAX_MOCKTIME:
        raise RpcError(RpcCode.INVALID_PARAMETER,
                       f"Mocktime must be in the range [0, {MAX_MOCKTIME}], not {timestamp}.")
    call.context.mocktime = timestamp


@rpc("zmq", description="Returns information about the active ZeroMQ notifications.",
     locking=Locking.SELF,
     result='[\n'
            '  {\n'
            '    "type" : "str",     (string) Type of notification\n'
            '    "address" : "str",  (string) Address of the publisher\n'
            '    "hwm" : n           (numeric) Outbound message high water mark\n'
            '  },\n'
            '  ...\n'
            ']',
     examples=("",))
def getzmqnotifications(call: Call) -> list[dict[str, Any]]:
    publisher = call.context.zmq
    return publisher.notifications() if publisher is not None else []
