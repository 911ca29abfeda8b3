"""Any number of Bumble virtual controllers on one simulated radio, each on its own pty.

Bumble's own `bumble.apps.controllers` accepts exactly two transports; the demo and the wearable
interop tests need more (three for the demo, six for the five-phone run).

usage: python herald_controllers.py pty:PATH [pty:PATH ...]
"""
import asyncio
import sys

from bumble.controller import Controller
from bumble.link import LocalLink
from bumble.transport import open_transport


async def main(names: list[str]) -> None:
    link = LocalLink()
    transports = []
    controllers = []
    for index, name in enumerate(names):
        transport = await open_transport(name)
        transports.append(transport)
        controllers.append(Controller(f"C{index}", host_source=transport.source, host_sink=transport.sink, link=link))
    print(f"{len(controllers)} controllers ready", flush=True)
    try:
        await asyncio.get_running_loop().create_future()
    finally:
        for t in transports:
            await t.close()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    try:
        asyncio.run(main(sys.argv[1:]))
    except KeyboardInterrupt:
        pass
