"""N Bumble virtual controllers on one simulated LE radio, each behind its own HCI transport.

usage: python controllers.py TRANSPORT TRANSPORT [TRANSPORT ...]

Bumble 0.0.236's own `bumble.apps.controllers` refuses anything but exactly two transports; tests
with several centrals need more.
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
    print("ready", flush=True)
    try:
        await asyncio.get_running_loop().create_future()
    finally:
        for t in transports:
            await t.close()


if __name__ == "__main__":
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    asyncio.run(main(sys.argv[1:]))
