"""Stack frames of a built image, from its disassembly: each function's prologue (push, vpush, and
`sub sp` by an immediate or by a register loaded with movw/movt), largest first, then the deepest
static call path from a root. An estimate: calls through pointers are not followed, and recursion
is cut. Usage: frames.py DISASSEMBLY [COUNT] [ROOT-SUBSTRING]  (Tools/firmware frames IMAGE runs it)."""
import functools
import re
import subprocess
import sys

PROLOGUE = 60  # instructions scanned for the frame set-up


def parse(path):
    funcs, cur = {}, None
    for line in open(path):
        m = re.match(r'^[0-9a-f]+ <(.+)>:$', line.rstrip())
        if m:
            cur = m.group(1)
            funcs[cur] = []
            continue
        m = re.match(r'^\s*[0-9a-f]+:\s+(\S+)\s*(.*)$', line)
        if m and cur:
            funcs[cur].append((m.group(1), m.group(2).split('@')[0].strip()))
    return funcs


def immediate(text):
    return int(text.strip().lstrip('#'), 0)


def frame_size(instructions):
    total, regs = 0, {}
    for op, args in instructions[:PROLOGUE]:
        if op.startswith('push'):
            total += 4 * len(args.strip('{}').split(','))
        elif op.startswith('vpush'):
            inner = args.strip('{}')
            m = re.match(r'd(\d+)-d(\d+)', inner)
            total += 8 * (int(m.group(2)) - int(m.group(1)) + 1) if m else 8 * len(inner.split(','))
        elif op.startswith('movt') and re.match(r'r\d+, #', args):
            reg, value = args.split(', ', 1)
            regs[reg] = regs.get(reg, 0) | (immediate(value) << 16)
        elif op.startswith('mov') and re.match(r'r\d+, #', args):
            reg, value = args.split(', ', 1)
            regs[reg] = immediate(value)
        elif op.startswith('sub') and args.startswith('sp,'):
            last = args.split(',')[-1].strip()
            total += immediate(last) if last.startswith('#') else regs.get(last, 0)
    return total


def callees(name, instructions, funcs):
    out = set()
    for op, args in instructions:
        if op in ('bl', 'blx', 'b', 'b.w'):
            m = re.search(r'<([^>+]+)>', args)
            if m and m.group(1) in funcs and m.group(1) != name:
                out.add(m.group(1))
    return out


def demangle(names):
    out = subprocess.run(['swift', 'demangle', '--simplified', '--compact'], input='\n'.join(names),
                         capture_output=True, text=True)
    return out.stdout.splitlines() if out.returncode == 0 else list(names)


def main():
    funcs = parse(sys.argv[1])
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    root = sys.argv[3] if len(sys.argv) > 3 else 'runStack'
    frames = {name: frame_size(ins) for name, ins in funcs.items()}
    calls = {name: callees(name, ins, funcs) for name, ins in funcs.items()}
    largest = sorted(frames, key=frames.get, reverse=True)[:count]
    print(f'largest frames (bytes):')
    for name, text in zip(largest, demangle(largest)):
        print(f'{frames[name]:7d}  {text[:160]}')

    visiting = set()

    @functools.lru_cache(None)
    def deepest(name):
        if name in visiting:
            return 0, ()
        visiting.add(name)
        best = max((deepest(c) for c in calls[name]), default=(0, ()), key=lambda d: d[0])
        visiting.discard(name)
        return frames[name] + best[0], (name,) + best[1]

    roots = [n for n in funcs if root in n]
    if not roots:
        return
    total, path = max((deepest(r) for r in roots), key=lambda d: d[0])
    print(f'deepest static path from {root}: {total} bytes')
    for name, text in zip(path, demangle(path)):
        print(f'{frames[name]:7d}  {text[:160]}')


if __name__ == '__main__':
    sys.setrecursionlimit(20000)
    main()
