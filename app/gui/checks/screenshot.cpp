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
  const size_t w = static_cast<size_t>(fb_width);
  f.pixels.resize(w * static_cast<size_t>(fb_height));
  // BGRA as 32-bit words, 0xAARRGGBB: the framebuffer's own layout, copied
  // without a conversion (GL_RGB bytes cost a pass over every pixel).
  glPixelStorei(GL_PACK_ALIGNMENT, 4);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, fb_width, fb_height, GL_BGRA, GL_UNSIGNED_INT_8_8_8_8_REV, f.pixels.data());
  // OpenGL rows run bottom-up; a window's (and PNG's) top-down: swapped in place.
  for (int r = 0; r < fb_height / 2; ++r)
    std::swap_ranges(f.pixels.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(r) * w),
                     f.pixels.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(r + 1) * w),
                     f.pixels.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(fb_height - 1 - r) * w));
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
  size_t k = 0;
  for (int r = 0; r < crop.h; ++r)
    for (int c = 0; c < crop.w; ++c) {
      const unsigned p = f.px(crop.x + c, crop.y + r);
      out[k++] = static_cast<unsigned char>(p >> 16);
      out[k++] = static_cast<unsigned char>(p >> 8);
      out[k++] = static_cast<unsigned char>(p);
    }
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
