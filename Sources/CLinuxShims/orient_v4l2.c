#include "orient_v4l2.h"

const unsigned long orient_VIDIOC_QUERYCAP = VIDIOC_QUERYCAP;
const unsigned long orient_VIDIOC_ENUM_FMT = VIDIOC_ENUM_FMT;
const unsigned long orient_VIDIOC_ENUM_FRAMESIZES = VIDIOC_ENUM_FRAMESIZES;
const unsigned long orient_VIDIOC_G_FMT = VIDIOC_G_FMT;
const unsigned long orient_VIDIOC_S_FMT = VIDIOC_S_FMT;
const unsigned long orient_VIDIOC_TRY_FMT = VIDIOC_TRY_FMT;
const unsigned long orient_VIDIOC_REQBUFS = VIDIOC_REQBUFS;
const unsigned long orient_VIDIOC_QUERYBUF = VIDIOC_QUERYBUF;
const unsigned long orient_VIDIOC_QBUF = VIDIOC_QBUF;
const unsigned long orient_VIDIOC_DQBUF = VIDIOC_DQBUF;
const unsigned long orient_VIDIOC_STREAMON = VIDIOC_STREAMON;
const unsigned long orient_VIDIOC_STREAMOFF = VIDIOC_STREAMOFF;
const unsigned long orient_VIDIOC_G_CTRL = VIDIOC_G_CTRL;

const unsigned int orient_V4L2_CID_CAMERA_ORIENTATION = V4L2_CID_CAMERA_ORIENTATION;
const unsigned int orient_V4L2_CID_CAMERA_SENSOR_ROTATION = V4L2_CID_CAMERA_SENSOR_ROTATION;

const unsigned int orient_V4L2_PIX_FMT_MJPEG = V4L2_PIX_FMT_MJPEG;
const unsigned int orient_V4L2_PIX_FMT_JPEG = V4L2_PIX_FMT_JPEG;
const unsigned int orient_V4L2_PIX_FMT_YUYV = V4L2_PIX_FMT_YUYV;
const unsigned int orient_V4L2_PIX_FMT_NV12 = V4L2_PIX_FMT_NV12;
const unsigned int orient_V4L2_PIX_FMT_RGB24 = V4L2_PIX_FMT_RGB24;
const unsigned int orient_V4L2_PIX_FMT_BGR24 = V4L2_PIX_FMT_BGR24;

int orient_is_map_failed(const void *address) { return address == MAP_FAILED; }
