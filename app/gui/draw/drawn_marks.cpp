#include "drawn_marks.hpp"

namespace flashlab::gui {

namespace {

struct Recorder {
  bool on = false;
  std::vector<DrawnMark> marks;
};

Recorder& recorder() {
  static Recorder r;  // one frame's marks, as ImGui keeps its own per-frame state
  return r;
}

}  // namespace

void record_marks(bool on) {
  recorder().on = on;
  if (!on) recorder().marks.clear();
}

bool recording_marks() { return recorder().on; }

void mark_line(const ImDrawList* dl, int vtx_begin, const ImVec2* points, int count, float width, const char* what) {
  Recorder& r = recorder();
  if (!r.on || dl == nullptr || count < 2 || dl->VtxBuffer.Size <= vtx_begin) return;
  DrawnMark m;
  m.list = dl;
  m.vtx_begin = vtx_begin;
  m.vtx_end = dl->VtxBuffer.Size;
  m.line = true;
  m.path.assign(points, points + count);
  m.width = width;
  m.what = what;
  r.marks.push_back(std::move(m));
}

void mark_area(const ImDrawList* dl, int vtx_begin, ImVec4 rect, const char* what) {
  Recorder& r = recorder();
  if (!r.on || dl == nullptr || dl->VtxBuffer.Size <= vtx_begin) return;
  DrawnMark m;
  m.list = dl;
  m.vtx_begin = vtx_begin;
  m.vtx_end = dl->VtxBuffer.Size;
  m.rect = rect;
  m.what = what;
  r.marks.push_back(std::move(m));
}

const std::vector<DrawnMark>& drawn_marks() { return recorder().marks; }

void clear_drawn_marks() { recorder().marks.clear(); }

}  // namespace flashlab::gui
