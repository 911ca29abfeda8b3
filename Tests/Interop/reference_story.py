"""What the reference C++ wearable's log says it did with one address: its links, its GATT discovery,
its payload reads and how each ended. It tells a read our side failed from one the reference broke
itself, which its README lists among its known defects: it closes every link at each restart of
scanning and advertising, sometimes between its discovery and its read ("GATT read error code: -107",
the link gone under the read, or an empty callback), and it never reads that address again though
it reconnects in every window. And it never schedules the first device it identifies: in each of 7
runs of test_chip.py (2026-11-30) exactly the first "New target identified" was missing from every
listing of its database ("coordinationprovider, - <address>, state=..."), every later one was listed.
It still read that device when the device connected to it (its links as a peripheral bring a central
into its list), so a beacon, which never connects out, heard first is never read.

The log names an address three ways: "Mac of connected: CE:4F:43:41:45:42", discovery "succeeded for
424541434fce" (its six octets least significant first) and "didRead: 42454143" (the first four of
those, then raw octets). A read is the discovery's `FOUND Herald read characteristic. Reading.` and
whatever ends it: `didRead`, `GATT read error`, or `has no payload data`.
"""
import re
from dataclasses import dataclass, field

import chip

REASON = re.compile(r"0x([0-9a-f]{2}) \(\d+\) ")


@dataclass
class Story:
    address: str
    links: list = field(default_factory=list)        # [(up at, down at or None, HCI reason or None)]
    discoveries: list = field(default_factory=list)  # simulated seconds of each discovery that succeeded
    reads: list = field(default_factory=list)        # [(started at, outcome, payload or None)]
    first_identified: bool = False                   # the first device the reference's database created
    listed: bool = False                             # in a listing of its database by its coordinator

    @property
    def payloads(self):
        return [p for _, outcome, p in self.reads if outcome == "read"]

    @property
    def closed_by_peer(self):
        """Links of this address that the reference did not end itself (0x16 is "we closed it")."""
        return [l for l in self.links if l[1] is not None and l[2] != 0x16]

    def broken_by_itself(self):
        """Reads that came back with nothing because the reference had closed the link: an error, an
        empty callback or no answer, each on a link it ended itself (0x16)."""
        broken = []
        for started, outcome, _ in self.reads:
            if outcome == "read":
                continue
            link = next((l for l in self.links if l[0] <= started and (l[1] is None or started <= l[1])), None)
            if link and link[2] == 0x16:
                broken.append((started, outcome))
        return broken

    def problem(self, expected):
        """Why this address's story is not that of a peer which served the reference correctly, or None.
        Served correctly: every payload read is one of `expected`, no link ended but by the reference
        itself, a discovery succeeded, and either a payload was read or every read and every discovery
        that led to none sat on a link the reference closed itself (its known defect). Or the address
        was the first the reference identified, never listed and never linked (its other defect)."""
        if any(p not in expected for p in self.payloads):
            return f"read a payload not expected: {self.payloads}"
        if self.closed_by_peer:
            return f"links not ended by the reference: {self.closed_by_peer}"
        if not self.discoveries:
            if self.first_identified and not self.listed and not self.links:
                return None  # the first device it identified, which it never schedules (above)
            return "no discovery of this address succeeded"
        if self.payloads:
            return None
        unexplained = [(t, o) for t, o, _ in self.reads if (t, o) not in self.broken_by_itself()]
        if unexplained:
            return f"reads that ended with nothing on a link the reference kept: {unexplained}"
        on = [l for l in self.links if any(l[0] <= t and (l[1] is None or t <= l[1]) for t in self.discoveries)]
        if any(l[2] != 0x16 for l in on):
            return f"a discovery led to no read on a link the reference did not close itself: {on}"
        return None

    def __str__(self):
        return (f"{self.address}: {'first identified, ' if self.first_identified else ''}"
                f"{'listed' if self.listed else 'never listed'}, links {[(round(u, 2), d and round(d, 2), r and hex(r)) for u, d, r in self.links]}, "
                f"discoveries {[round(t, 2) for t in self.discoveries]}, "
                f"reads {[(round(t, 2), o) for t, o, _ in self.reads]}")


def reference_story(log_path, address):
    """The Story of `address` ("CE:4F:43:41:45:42") in the reference wearable's log."""
    address = address.upper()
    lsb_first = "".join(reversed(address.lower().split(":")))
    story = Story(address)
    open_link = None          # index in story.links awaiting its reason
    reason_for = None         # index of a link whose disconnection's reason is the next reason line
    reading = False           # a read of this address started and not ended
    discovered_here = False   # the last discovery to succeed was this address's
    identified_any = False
    for t, line in chip.lines(log_path):
        if "New target identified: " in line:
            if not identified_any:
                story.first_identified = line.rstrip().split("identified: ")[-1].startswith(lsb_first)
            identified_any = True
        elif f"coordinationprovider, - {address.lower()}, state=" in line:
            story.listed = True
        elif f"Mac of connected: {address}" in line:
            story.links.append((t, None, None))
            open_link = len(story.links) - 1
        elif f"Mac of disconnected: {address}" in line:
            if open_link is not None:
                up = story.links[open_link][0]
                story.links[open_link] = (up, t, None)
                reason_for, open_link = open_link, None
        elif reason_for is not None and REASON.search(line):
            up, down, _ = story.links[reason_for]
            story.links[reason_for] = (up, down, int(REASON.search(line)[1], 16))
            reason_for = None
        elif "The GATT discovery procedure succeeded for " in line:
            discovered_here = line.rstrip().split("succeeded for ")[-1].startswith(lsb_first)
            if discovered_here:
                story.discoveries.append(t)
        elif "FOUND Herald read characteristic. Reading." in line and discovered_here:
            story.reads.append((t, "unanswered", None))
            reading = True
        elif reading and "GATT read error" in line:
            story.reads[-1] = (story.reads[-1][0], "error", None)
            reading = False
        elif reading and "has no payload data" in line:
            story.reads[-1] = (story.reads[-1][0], "empty", None)
            reading = False
        elif f"didRead: {lsb_first[:8]}" in line:
            payload = re.search(r"with payload: ([0-9a-f]+)", line)
            if reading:
                story.reads[-1] = (story.reads[-1][0], "read", payload and payload[1])
                reading = False
            else:
                story.reads.append((t, "read", payload and payload[1]))
    return story
