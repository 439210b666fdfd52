// The measurement behind orientd-face's choice of dlib over OpenCV (docs/face.md, "Why dlib and
// not OpenCV"): the same grayscale PGM pictures, each shown in four quarter turns, through
// OpenCV 4.6's Haar (default, alt2) and LBP (improved) frontal cascades and dlib 19.24's HOG
// frontal detector; the turn with the strongest evidence wins (most neighbours for a cascade,
// the highest score for dlib). ROLL=DEGREES rolls each picture first; VERBOSE=1 prints every
// decision. Not part of the build: OpenCV is not in scripts/deps.sh (orientd does not use it).
//
//   apt-get install libopencv-objdetect-dev opencv-data libdlib-dev
//   g++ -O2 -std=c++17 -I/usr/include/opencv4 scripts/bench/face-compare.cpp -o face-compare \
//     -lopencv_objdetect -lopencv_imgproc -lopencv_core $(pkg-config --libs dlib-1)
//   ./face-compare 480 face:portrait.pgm none:cup.pgm ...     (SIDE: longer side in pixels)
#include <opencv2/objdetect.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/core.hpp>
#include <dlib/image_processing/frontal_face_detector.h>
#include <dlib/image_transforms.h>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>
#include <sstream>

static cv::Mat readPGM(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::string magic; int w, h, maxv; f >> magic >> w >> h >> maxv; f.get();
  cv::Mat m(h, w, CV_8UC1); f.read((char *)m.data, w * h); return m;
}
static cv::Mat turn(const cv::Mat &m, int k) {  // clockwise quarter turns
  if (k == 0) return m.clone();
  cv::Mat out; cv::rotate(m, out, k == 1 ? cv::ROTATE_90_CLOCKWISE : k == 2 ? cv::ROTATE_180 : cv::ROTATE_90_COUNTERCLOCKWISE); return out;
}
static cv::Mat fit(const cv::Mat &m, int side) {
  int longest = std::max(m.cols, m.rows); if (longest <= side) return m;
  double s = double(side) / longest; cv::Mat out; cv::resize(m, out, cv::Size(), s, s, cv::INTER_AREA); return out;
}
static double now() { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

struct Result { int faces; double evidence; };
struct Method {
  std::string name; cv::CascadeClassifier cascade; bool isDlib = false; dlib::frontal_face_detector dlibDetector;
  Result run(const cv::Mat &g) {
    if (isDlib) {
      dlib::array2d<unsigned char> img(g.rows, g.cols);
      for (int y = 0; y < g.rows; y++) for (int x = 0; x < g.cols; x++) img[y][x] = g.at<unsigned char>(y, x);
      std::vector<dlib::rect_detection> dets; dlibDetector(img, dets, 0.0);
      double best = 0; for (auto &d : dets) best = std::max(best, d.detection_confidence + 1.0);
      return {int(dets.size()), best};
    }
    std::vector<cv::Rect> faces; std::vector<int> neighbours;
    cascade.detectMultiScale(g, faces, neighbours, 1.1, 3, 0, cv::Size(24, 24));
    double best = 0; for (int n : neighbours) best = std::max(best, double(n));
    return {int(faces.size()), best};
  }
};

int main(int argc, char **argv) {
  // usage: compare SIDE truth:FILE... (truth: face = head at the top; none = no face)
  int side = atoi(argv[1]);
  std::vector<Method> methods(4);
  methods[0].name = "haar-default"; methods[0].cascade.load("/usr/share/opencv4/haarcascades/haarcascade_frontalface_default.xml");
  methods[1].name = "haar-alt2"; methods[1].cascade.load("/usr/share/opencv4/haarcascades/haarcascade_frontalface_alt2.xml");
  methods[2].name = "lbp-improved"; methods[2].cascade.load("/usr/share/opencv4/lbpcascades/lbpcascade_frontalface_improved.xml");
  methods[3].name = "dlib-hog"; methods[3].isDlib = true; methods[3].dlibDetector = dlib::get_frontal_face_detector();
  const char *edges[4] = {"top", "left", "bottom", "right"};  // head edge when found at cw turn k
  struct Tally { int right = 0, wrong = 0, missed = 0, silent = 0, fp = 0, anyWrong = 0; double ms = 0; int calls = 0; };
  std::vector<Tally> tally(methods.size());
  bool verbose = getenv("VERBOSE") != nullptr;
  for (int i = 2; i < argc; i++) {
    std::string arg = argv[i]; auto colon = arg.find(':');
    std::string truth = arg.substr(0, colon), path = arg.substr(colon + 1);
    cv::Mat base = fit(readPGM(path), side);
    static double roll = getenv("ROLL") ? atof(getenv("ROLL")) : 0;
    if (roll != 0) {
      cv::Mat r = cv::getRotationMatrix2D(cv::Point2f(base.cols / 2.0f, base.rows / 2.0f), -roll, 1.0);
      cv::Mat out; cv::warpAffine(base, out, r, base.size(), cv::INTER_LINEAR, cv::BORDER_REPLICATE); base = out;
    }
    for (int shown = 0; shown < 4; shown++) {   // the photo shown turned cw by `shown`
      cv::Mat frame = turn(base, shown);
      // head edge in `frame`: turning cw by `shown` moves the top edge to edges...
      const char *trueEdge[4] = {"top", "right", "bottom", "left"};
      for (size_t m = 0; m < methods.size(); m++) {
        double t0 = now(); int bestK = -1; double best = 0; int detectedTurns = 0; int wrongAny = 0;
        for (int k = 0; k < 4; k++) {
          Result r = methods[m].run(turn(frame, k));
          if (r.faces > 0) detectedTurns++;
          if (r.evidence > best) { best = r.evidence; bestK = k; }
          if (r.faces > 0 && std::string(edges[k]) != trueEdge[shown]) wrongAny++;
        }
        double ms = now() - t0; tally[m].ms += ms; tally[m].calls++;
        std::string answer = bestK < 0 ? "null" : edges[bestK];
        if (truth == "face") {
          if (bestK < 0) tally[m].missed++; else if (answer == trueEdge[shown]) tally[m].right++; else tally[m].wrong++;
          if (wrongAny) tally[m].anyWrong++;
        } else {
          if (bestK < 0) tally[m].silent++; else tally[m].fp++;
        }
        if (verbose) printf("%-40s shown %3d  %-13s -> %-6s (evidence %.2f, turns with a detection %d) %.1f ms\n", path.c_str(), shown * 90, methods[m].name.c_str(), answer.c_str(), best, detectedTurns, ms);
      }
    }
  }
  printf("%-14s %6s %6s %7s %12s %8s %8s %10s\n", "method", "right", "wrong", "missed", "fires-on-a-", "silent", "false+", "ms/frame");
  printf("%-14s %6s %6s %7s %12s %8s %8s %10s\n", "", "", "", "", "wrong-turn", "", "", "(4 turns)");
  for (size_t m = 0; m < methods.size(); m++) {
    auto &t = tally[m];
    printf("%-14s %6d %6d %7d %12d %8d %8d %10.1f\n", methods[m].name.c_str(), t.right, t.wrong, t.missed, t.anyWrong, t.silent, t.fp, t.ms / t.calls);
  }
}
