"""Bumble virtual controllers on one simulated LE radio (LocalLink), each behind a pty transport.

usage: python controllers.py pty:PATH pty:PATH [...]      prints "ready" once all are open
"""
import asyncio
import sys

from bumble.controller import Controller
from bumble.link import LocalLink
from bumble.transport import open_transport


async def main(names):
    link = LocalLink()
    transports = [await open_transport(n) for n in names]
    keep = [Controller(f"C{i}", host_source=t.source, host_sink=t.sink, link=link) for i, t in enumerate(transports)]
    print("ready", flush=True)
    try:
        await asyncio.get_running_loop().create_future()
    finally:
        del keep
        for t in transports:
            await t.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
