#!/usr/bin/python3
"""A GPS receiver on a Unix socket for geoclue's NMEA source ([network-nmea] nmea-socket=PATH).

usage: nmea_server.py PATH LATITUDE LONGITUDE
Listens on PATH (mode 0666: geoclue runs as its own user) and sends every client one GGA
sentence a second: a fix at LATITUDE, LONGITUDE (decimal degrees), 8 satellites, HDOP 0.9,
545.4 m above sea level, stamped with the current UTC time. GGA carries no course, so any
heading in geoclue's locations comes from elsewhere (its compass). Logs each connection on
stderr. Stdlib only.
"""

import os
import socket
import sys
import threading
import time


def nmea(body):
    checksum = 0
    for char in body.encode():
        checksum ^= char
    return '$%s*%02X\r\n' % (body, checksum)


def degrees_minutes(value, width):
    value = abs(value)
    whole = int(value)
    return '%0*d%07.4f' % (width, whole, (value - whole) * 60)


def gga(latitude, longitude):
    stamp = time.strftime('%H%M%S.00', time.gmtime())
    return nmea('GPGGA,%s,%s,%s,%s,%s,1,08,0.9,545.4,M,46.9,M,,' % (
        stamp, degrees_minutes(latitude, 2), 'N' if latitude >= 0 else 'S',
        degrees_minutes(longitude, 3), 'E' if longitude >= 0 else 'W'))


def serve(conn, latitude, longitude):
    sys.stderr.write('client connected\n')
    sys.stderr.flush()
    try:
        while True:
            conn.sendall(gga(latitude, longitude).encode())
            time.sleep(1)
    except OSError as error:
        sys.stderr.write('client gone: %s\n' % error)
        sys.stderr.flush()
    finally:
        conn.close()


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    path, latitude, longitude = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    if os.path.exists(path):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    os.chmod(path, 0o666)
    server.listen(4)
    sys.stderr.write('listening on %s; first sentence: %s' % (path, gga(latitude, longitude)))
    sys.stderr.flush()
    while True:
        conn, _ = server.accept()
        threading.Thread(target=serve, args=(conn, latitude, longitude), daemon=True).start()


if __name__ == '__main__':
    main()
