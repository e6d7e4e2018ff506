#include "screenshot.hpp"

#include <GL/gl.h>
#include <stb_image_write.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <vector>

#include "flashlab/analysis/text/csv.hpp"

namespace flashlab::gui {

namespace {
void append(void* context, void* data, int size) {
  static_cast<std::string*>(context)->append(static_cast<const char*>(data), static_cast<size_t>(size));
}
}  // namespace

Frame read_frame(int fb_width, int fb_height) {
  Frame f;
  if (fb_width <= 0 || fb_height <= 0) return f;
  f.w = fb_width;
  f.h = fb_height;
  f.rgb.resize(static_cast<size_t>(fb_width) * static_cast<size_t>(fb_height) * 3);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, fb_width, fb_height, GL_RGB, GL_UNSIGNED_BYTE, f.rgb.data());
  // OpenGL rows run bottom-up; a window's (and PNG's) top-down: swapped in place.
  const size_t row = static_cast<size_t>(fb_width) * 3;
  for (int r = 0; r < fb_height / 2; ++r)
    std::swap_ranges(&f.rgb[static_cast<size_t>(r) * row], &f.rgb[static_cast<size_t>(r) * row] + row,
                     &f.rgb[static_cast<size_t>(fb_height - 1 - r) * row]);
  return f;
}

void write_screenshot(const std::string& path, int fb_width, int fb_height, PixelRect crop) {
  if (fb_width <= 0 || fb_height <= 0) throw std::runtime_error("screenshot: the window has no pixels (minimised?)");
  const Frame f = read_frame(fb_width, fb_height);
  if (crop.w <= 0 || crop.h <= 0) crop = {0, 0, fb_width, fb_height};
  crop.x = std::clamp(crop.x, 0, fb_width - 1);
  crop.y = std::clamp(crop.y, 0, fb_height - 1);
  crop.w = std::clamp(crop.w, 1, fb_width - crop.x);
  crop.h = std::clamp(crop.h, 1, fb_height - crop.y);
  std::vector<unsigned char> out(static_cast<size_t>(crop.w) * static_cast<size_t>(crop.h) * 3);
  for (int r = 0; r < crop.h; ++r)
    std::copy_n(&f.rgb[(static_cast<size_t>(crop.y + r) * static_cast<size_t>(fb_width) + static_cast<size_t>(crop.x)) * 3],
                static_cast<size_t>(crop.w) * 3, &out[static_cast<size_t>(r) * static_cast<size_t>(crop.w) * 3]);
  // PNG, or BMP when the path ends in .bmp: uncompressed, written in a tenth of
  // the time (a script that shoots every frame it checks).
  std::string ext = path.size() >= 4 ? path.substr(path.size() - 4) : "";
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool bmp = ext == ".bmp";
  std::string bytes;
  if (!(bmp ? stbi_write_bmp_to_func(append, &bytes, crop.w, crop.h, 3, out.data())
            : stbi_write_png_to_func(append, &bytes, crop.w, crop.h, 3, out.data(), crop.w * 3)))
    throw std::runtime_error(std::string("screenshot: ") + (bmp ? "BMP" : "PNG") + " encoding failed");
  analysis::write_file_atomic(path, bytes);
}

}  // namespace flashlab::gui
