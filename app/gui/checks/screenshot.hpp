// The whole window (or one panel of it) as a PNG: glReadPixels of the frame
// just drawn, flipped to top-down rows, encoded by stb_image_write, written
// atomically.
#pragma once

#include <string>

namespace flashlab::gui {

struct PixelRect {
  int x = 0, y = 0, w = 0, h = 0;  // top-left origin, framebuffer pixels; w = 0: everything
};

// Throws std::runtime_error with one line (encode or write failure).
void write_screenshot(const std::string& path, int fb_width, int fb_height, PixelRect crop = {});

}  // namespace flashlab::gui
