#!/usr/bin/python3
"""Reads orientation, light and compass through Qt 5's QtSensors, as a Qt application does.

usage: qt_sensors.py SECONDS
Starts a QOrientationSensor, a QLightSensor and a QCompass on QtSensors' iio-sensor-proxy
backends (identifiers iio-sensor-proxy.orientationsensor, .lightsensor, .compass: the plugin
talks to net.hadess.SensorProxy on the system bus) and prints one JSON line per event for
SECONDS seconds:
  {"backends": {"QOrientationSensor": ["iio-sensor-proxy.orientationsensor", ...], ...}}
  {"sensor": "orientation", "started": true, "identifier": "iio-sensor-proxy.orientationsensor"}
  {"sensor": "orientation", "orientation": 3, "name": "LeftUp"}
  {"sensor": "light", "lux": 123.4}
  {"sensor": "compass", "azimuth": 90.0, "calibration": 1.0}
No window system: a QCoreApplication. Needs python3-pyqt5.qtsensors.
"""

import json
import sys

from PyQt5.QtCore import QCoreApplication, QTimer
from PyQt5.QtSensors import QCompass, QLightSensor, QOrientationReading, QOrientationSensor, QSensor

ORIENTATIONS = {getattr(QOrientationReading, n): n for n in
                ('Undefined', 'TopUp', 'TopDown', 'LeftUp', 'RightUp', 'FaceUp', 'FaceDown')}


def emit(obj):
    print(json.dumps(obj, sort_keys=True), flush=True)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    app = QCoreApplication(sys.argv)
    emit({'backends': {bytes(t).decode(): [bytes(i).decode() for i in QSensor.sensorsForType(t)]
                       for t in QSensor.sensorTypes()}})
    orientation = QOrientationSensor()
    orientation.setIdentifier(b'iio-sensor-proxy.orientationsensor')
    light = QLightSensor()
    light.setIdentifier(b'iio-sensor-proxy.lightsensor')
    compass = QCompass()
    compass.setIdentifier(b'iio-sensor-proxy.compass')

    def on_orientation():
        value = int(orientation.reading().orientation())
        emit({'sensor': 'orientation', 'orientation': value,
              'name': ORIENTATIONS.get(value, '?')})

    def on_light():
        emit({'sensor': 'light', 'lux': round(light.reading().lux(), 3)})

    def on_compass():
        reading = compass.reading()
        emit({'sensor': 'compass', 'azimuth': round(reading.azimuth(), 3),
              'calibration': round(reading.calibrationLevel(), 3)})

    orientation.readingChanged.connect(on_orientation)
    light.readingChanged.connect(on_light)
    compass.readingChanged.connect(on_compass)
    for name, sensor in (('orientation', orientation), ('light', light), ('compass', compass)):
        started = sensor.start()
        emit({'sensor': name, 'started': bool(started),
              'identifier': bytes(sensor.identifier()).decode(),
              'busy': bool(sensor.isBusy()), 'error': int(sensor.error())})
    QTimer.singleShot(int(float(sys.argv[1]) * 1000), app.quit)
    app.exec_()


if __name__ == '__main__':
    main()
