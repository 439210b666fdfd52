#!/usr/bin/python3
"""Prints members of JSON documents as KEY=VALUE lines for shell checks (stdlib only).

usage: json_fields.py FILE [--match KEY=VALUE] PATH...
FILE holds one JSON document, or one per line (JSON Lines; with --match, the first line whose
top-level KEY equals VALUE, e.g. --match event=ready). PATH is a dotted path into it: "chosen",
"sensors.0.mount_matrix", "shutter_devices.0.pass_on". Each is printed as PATH=VALUE with VALUE in
JSON (strings without quotes, so "chosen_mode=buffered"; null, numbers and lists as JSON). A
missing member prints PATH=<missing>. Exit 1 when FILE has no (matching) JSON document.
"""

import json
import sys


def documents(text):
    try:
        yield json.loads(text)
        return
    except ValueError:
        pass
    for line in text.splitlines():
        try:
            yield json.loads(line)
        except ValueError:
            continue


def lookup(doc, path):
    for part in path.split('.'):
        if isinstance(doc, list) and part.isdigit() and int(part) < len(doc):
            doc = doc[int(part)]
        elif isinstance(doc, dict) and part in doc:
            doc = doc[part]
        else:
            return '<missing>'
    return doc if isinstance(doc, str) else json.dumps(doc, separators=(',', ':'))


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    path, args = args[0], args[1:]
    match = None
    if args[:1] == ['--match']:
        key, _, value = args[1].partition('=')
        match, args = (key, value), args[2:]
    with open(path) as f:
        text = f.read()
    for doc in documents(text):
        if match is None or (isinstance(doc, dict) and str(doc.get(match[0])) == match[1]):
            for p in args:
                print('%s=%s' % (p, lookup(doc, p)))
            return
    sys.exit(1)


if __name__ == '__main__':
    main()
