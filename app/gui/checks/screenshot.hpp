// The whole window (or one panel of it) as a PNG: glReadPixels of the frame
// just drawn, flipped to top-down rows, encoded by stb_image_write, written
// atomically.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace flashlab::gui {

// The frame just drawn, read back: a pixel a word (0xRRGGBB in its low 24
// bits, the top 8 bits not a colour), rows top-down (as the window shows it).
struct Frame {
  int w = 0, h = 0;
  std::vector<std::uint32_t> pixels;
  unsigned px(int x, int y) const {  // 0xRRGGBB
    return pixels[static_cast<size_t>(y) * static_cast<size_t>(w) + static_cast<size_t>(x)] & 0xFFFFFFu;
  }
};
Frame read_frame(int fb_width, int fb_height);

struct PixelRect {
  int x = 0, y = 0, w = 0, h = 0;  // top-left origin, framebuffer pixels; w = 0: everything
};

// Throws std::runtime_error with one line (encode or write failure).
void write_screenshot(const std::string& path, int fb_width, int fb_height, PixelRect crop = {});

}  // namespace flashlab::gui
