// V4L2 request codes and pixel-format codes for Swift (V4L2Kit).
// VIDIOC_* are built by the function-like _IOR/_IOW/_IOWR macros and V4L2_PIX_FMT_* by
// v4l2_fourcc(), and the camera control ids are sums of macros: Swift imports none of them, so
// this header exports their values as constants with the orient_ prefix. The structures
// (struct v4l2_capability, v4l2_format, v4l2_buffer, ...) come straight from the kernel header.
#pragma once

#include <linux/videodev2.h>
#include <sys/mman.h>

/// VIDIOC_QUERYCAP: driver, card, bus and capability flags.
extern const unsigned long orient_VIDIOC_QUERYCAP;
/// VIDIOC_ENUM_FMT: the index-th pixel format of a buffer type.
extern const unsigned long orient_VIDIOC_ENUM_FMT;
/// VIDIOC_ENUM_FRAMESIZES: the index-th frame size of a pixel format.
extern const unsigned long orient_VIDIOC_ENUM_FRAMESIZES;
/// VIDIOC_G_FMT / VIDIOC_S_FMT / VIDIOC_TRY_FMT: read, set or test the data format.
extern const unsigned long orient_VIDIOC_G_FMT;
extern const unsigned long orient_VIDIOC_S_FMT;
extern const unsigned long orient_VIDIOC_TRY_FMT;
/// VIDIOC_REQBUFS / VIDIOC_QUERYBUF / VIDIOC_QBUF / VIDIOC_DQBUF: streaming buffers.
extern const unsigned long orient_VIDIOC_REQBUFS;
extern const unsigned long orient_VIDIOC_QUERYBUF;
extern const unsigned long orient_VIDIOC_QBUF;
extern const unsigned long orient_VIDIOC_DQBUF;
/// VIDIOC_STREAMON / VIDIOC_STREAMOFF: start and stop streaming (argument: the buffer type).
extern const unsigned long orient_VIDIOC_STREAMON;
extern const unsigned long orient_VIDIOC_STREAMOFF;
/// VIDIOC_G_CTRL: read one control (struct v4l2_control).
extern const unsigned long orient_VIDIOC_G_CTRL;

/// V4L2_CID_CAMERA_ORIENTATION (menu: V4L2_CAMERA_ORIENTATION_FRONT/BACK/EXTERNAL).
extern const unsigned int orient_V4L2_CID_CAMERA_ORIENTATION;
/// V4L2_CID_CAMERA_SENSOR_ROTATION: degrees counter-clockwise to correct the mounting.
extern const unsigned int orient_V4L2_CID_CAMERA_SENSOR_ROTATION;

/// The pixel formats orientcam negotiates (v4l2_fourcc values).
extern const unsigned int orient_V4L2_PIX_FMT_MJPEG;
extern const unsigned int orient_V4L2_PIX_FMT_JPEG;
extern const unsigned int orient_V4L2_PIX_FMT_YUYV;
extern const unsigned int orient_V4L2_PIX_FMT_NV12;
extern const unsigned int orient_V4L2_PIX_FMT_RGB24;
extern const unsigned int orient_V4L2_PIX_FMT_BGR24;

/// MAP_FAILED is a cast macro ((void *)-1); Swift cannot compare against it directly.
int orient_is_map_failed(const void *address);
