"""Relays bytes between QEMU's UART socket and a controller's pty.

usage: python3 relay.py SOCKET PTY

QEMU serves the firmware's HCI UART on a unix socket (`-serial unix:SOCKET,server=on,wait=on`) and
waits for this relay before starting the CPU; a `-serial pty` would drop whatever the firmware sends
before someone opens it. The pty side is a Bumble virtual controller (or any hci_uart tty).
"""
import os
import select
import socket
import sys
import termios
import time
import tty


TRACE = os.environ.get("RELAY_TRACE") == "1"


def trace(direction: str, data: bytes) -> None:
    if TRACE:
        print(f"relay {direction} {data.hex()}", file=sys.stderr, flush=True)


def main(sock_path: str, pty_path: str) -> None:
    fd = os.open(pty_path, os.O_RDWR | os.O_NOCTTY)
    tty.setraw(fd)
    attrs = termios.tcgetattr(fd)
    attrs[3] &= ~termios.ECHO
    termios.tcsetattr(fd, termios.TCSANOW, attrs)
    # Said before connecting, never after: QEMU holds the CPU until the connection is accepted, and
    # from then on the firmware's log shares this process's stdout pipe, written a few characters at
    # a time; a line of ours there could land inside one of its lines (it split a memory line once).
    # One write of the whole line (print writes the line and its end separately).
    sys.stderr.write(f"relay: {pty_path} <-> {sock_path}\n")
    sys.stderr.flush()
    deadline = time.time() + 30
    while True:
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(sock_path)
            break
        except (FileNotFoundError, ConnectionRefusedError):
            s.close()
            if time.time() > deadline:
                sys.exit(f"relay: no QEMU socket at {sock_path}")
            time.sleep(0.05)
    while True:
        readable, _, _ = select.select([s, fd], [], [])
        if s in readable:
            data = s.recv(4096)
            if not data:
                return
            trace(">", data)
            os.write(fd, data)
        if fd in readable:
            try:
                data = os.read(fd, 4096)
            except OSError:
                return
            if not data:
                return
            trace("<", data)
            s.sendall(data)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
