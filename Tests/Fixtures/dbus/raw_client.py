#!/usr/bin/python3
"""A D-Bus client that misbehaves on purpose, for orientd's fault-injection tests.

It speaks the wire protocol itself on a raw socket, so it can send what a library would not
(a body of tens of MiB built in one piece, hundreds of calls without waiting) and not read
what it is sent (a library reads its socket whenever it runs):

    raw_client.py ADDRESS huge-claim BYTES   org.orientd.Orientation1.Claim with an 'ay'
                                             argument of BYTES bytes (Claim takes none)
    raw_client.py ADDRESS huge-get BYTES     Properties.Get with an interface name of BYTES
    raw_client.py ADDRESS pipeline N         N Properties.GetAll calls at once, then reads every
                                             answer
    raw_client.py ADDRESS deaf N             N GetAll calls, then never reads: prints "sent N"
                                             and sleeps until killed

Each prints one line "result <what came back>": an error name, "return", "disconnected" (the
bus dropped the connection), or for pipeline "returns R errors E [NAME...]".
"""
import os
import socket
import struct
import sys
import time

SERVICE = 'org.orientd.Orientation1'
PATH = '/org/orientd/Orientation1'
PROPERTIES = 'org.freedesktop.DBus.Properties'


def pad(data, alignment):
    return data + b'\0' * (-len(data) % alignment)


def string(text):
    raw = text if isinstance(text, bytes) else text.encode()
    return struct.pack('<I', len(raw)) + raw + b'\0'


class Client:
    def __init__(self, address):
        path = dict(p.split('=', 1) for p in address.split(':', 1)[1].split(','))['path']
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.buffer = b''
        self.serial = 0
        self.sock.sendall(b'\0AUTH EXTERNAL ' + str(os.getuid()).encode().hex().encode()
                          + b'\r\n')
        line = self.read_line()
        if not line.startswith(b'OK '):
            raise SystemExit('auth refused: %r' % line)
        self.sock.sendall(b'BEGIN\r\n')
        hello = self.send('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus',
                          'Hello')
        kind, _, _ = self.read_reply(hello)
        if kind != 'return':
            raise SystemExit('Hello failed: %s' % kind)

    def read_line(self):
        while b'\r\n' not in self.buffer:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise SystemExit('bus closed during authentication')
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b'\r\n', 1)
        return line

    def send(self, destination, path, interface, member, signature='', body=b''):
        """Sends a method call; returns its serial."""
        self.serial += 1
        fields = b''
        for code, kind, value in [(1, 'o', path), (2, 's', interface), (3, 's', member),
                                  (6, 's', destination), (8, 'g', signature)]:
            if kind == 'g' and not value:
                continue
            fields = pad(fields, 8)
            fields += bytes([code, 1]) + kind.encode() + b'\0'
            if kind == 'g':
                fields += bytes([len(value)]) + value.encode() + b'\0'
            else:
                fields = pad(fields, 4) + string(value)
        header = struct.pack('<cBBBIII', b'l', 1, 0, 1, len(body), self.serial, len(fields))
        self.sock.sendall(pad(header + fields, 8) + body)
        return self.serial

    def read_message(self):
        """The next message: (type, reply serial, error name); None when the bus hung up."""
        while True:
            if len(self.buffer) >= 16:
                body_length, _, fields_length = struct.unpack_from('<III', self.buffer, 4)
                start = 16 + fields_length + (-(16 + fields_length) % 8)
                if len(self.buffer) >= start + body_length:
                    message = self.buffer[:start + body_length]
                    self.buffer = self.buffer[start + body_length:]
                    return self.parse(message, fields_length)
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                return None
            self.buffer += chunk

    @staticmethod
    def parse(message, fields_length):
        kind = message[1]
        offset = 16
        end = 16 + fields_length
        reply_serial = None
        error = None
        while offset < end:
            offset += -offset % 8
            code = message[offset]
            signature_length = message[offset + 1]
            letter = message[offset + 2:offset + 2 + signature_length].decode()
            offset += 3 + signature_length
            if letter == 'u':
                offset += -offset % 4
                value = struct.unpack_from('<I', message, offset)[0]
                offset += 4
            elif letter in ('s', 'o'):
                offset += -offset % 4
                length = struct.unpack_from('<I', message, offset)[0]
                value = message[offset + 4:offset + 4 + length].decode()
                offset += 5 + length
            elif letter == 'g':
                length = message[offset]
                value = message[offset + 1:offset + 1 + length].decode()
                offset += 2 + length
            else:
                raise SystemExit('unexpected header field type %r' % letter)
            if code == 5:
                reply_serial = value
            elif code == 4:
                error = value
        names = {1: 'call', 2: 'return', 3: 'error', 4: 'signal'}
        return names.get(kind, '?'), reply_serial, error

    def read_reply(self, serial):
        while True:
            message = self.read_message()
            if message is None:
                return 'disconnected', None, None
            if message[0] in ('return', 'error') and message[1] == serial:
                return message


def main():
    address, mode, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    client = Client(address)
    if mode == 'huge-claim':
        body = struct.pack('<I', count) + b'\x5a' * count
        try:
            serial = client.send(SERVICE, PATH, SERVICE, 'Claim', 'ay', body)
            kind, _, error = client.read_reply(serial)
        except (BrokenPipeError, ConnectionResetError):
            kind, error = 'disconnected', None
        print('result', error or kind, flush=True)
    elif mode == 'huge-get':
        body = pad(string(b'i' * count), 4) + string('Orientation')
        try:
            serial = client.send(SERVICE, PATH, PROPERTIES, 'Get', 'ss', body)
            kind, _, error = client.read_reply(serial)
        except (BrokenPipeError, ConnectionResetError):
            kind, error = 'disconnected', None
        print('result', error or kind, flush=True)
    elif mode == 'pipeline':
        serials = {client.send(SERVICE, PATH, PROPERTIES, 'GetAll', 's', string(SERVICE))
                   for _ in range(count)}
        returns = 0
        errors = {}
        while serials:
            message = client.read_message()
            if message is None:
                break
            kind, reply_serial, error = message
            if reply_serial in serials:
                serials.discard(reply_serial)
                if kind == 'return':
                    returns += 1
                else:
                    errors[error] = errors.get(error, 0) + 1
        print('result returns %d errors %d %s' % (
            returns, sum(errors.values()), ' '.join(sorted(errors))), flush=True)
    elif mode == 'deaf':
        for _ in range(count):
            client.send(SERVICE, PATH, PROPERTIES, 'GetAll', 's', string(SERVICE))
        print('sent', count, flush=True)
        while True:
            time.sleep(3600)
    else:
        raise SystemExit('unknown mode %r' % mode)


if __name__ == '__main__':
    main()
