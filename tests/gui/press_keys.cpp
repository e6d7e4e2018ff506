// Presses keys on an X display as a keyboard (or a clicker) does, through the
// XTEST extension: each press and its release sent together, as a clicker's
// instant tap, then closes the window the way a window manager asks. Used by
// the GUI test that fails on a lost key press.
//
//   flashlab_press_keys WINDOW_NAME DELAY_MS KEY[:GAP_MS] ...   (KEY: an X keysym name, "Next", "Prior", "Right")
//
// Exit 77 (skipped) when the display has no XTEST or libXtst is not installed.
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

using FakeKey = int (*)(Display*, unsigned int, int, unsigned long);

Window find_window(Display* d, Window w, const char* name) {
  char* n = nullptr;
  if (XFetchName(d, w, &n) && n) {
    const bool match = std::strcmp(n, name) == 0;
    XFree(n);
    if (match) return w;
  }
  Window root = 0, parent = 0, *kids = nullptr;
  unsigned count = 0;
  if (!XQueryTree(d, w, &root, &parent, &kids, &count)) return 0;
  Window found = 0;
  for (unsigned k = 0; k < count && !found; ++k) found = find_window(d, kids[k], name);
  if (kids) XFree(kids);
  return found;
}

void sleep_ms(long ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s WINDOW_NAME DELAY_MS KEY[:GAP_MS] ...\n", argv[0]);
    return 2;
  }
  void* xtst = dlopen("libXtst.so.6", RTLD_NOW);
  FakeKey fake = xtst ? reinterpret_cast<FakeKey>(dlsym(xtst, "XTestFakeKeyEvent")) : nullptr;
  if (!fake) {
    std::printf("SKIPPED: libXtst.so.6 (XTEST) is not installed\n");
    return 77;
  }
  Display* d = XOpenDisplay(nullptr);
  if (!d) {
    std::fprintf(stderr, "cannot open the display\n");
    return 2;
  }
  int ev = 0, er = 0, op = 0;
  if (!XQueryExtension(d, "XTEST", &op, &ev, &er)) {
    std::printf("SKIPPED: the X server has no XTEST extension\n");
    return 77;
  }
  // Up to two minutes for the window to appear on screen (a loaded machine starts it slowly).
  Window w = 0;
  for (int tries = 0; tries < 1200; ++tries) {
    w = find_window(d, DefaultRootWindow(d), argv[1]);
    XWindowAttributes a{};
    if (w && XGetWindowAttributes(d, w, &a) && a.map_state == IsViewable) break;
    w = 0;
    sleep_ms(100);
  }
  if (!w) {
    std::fprintf(stderr, "no window named '%s'\n", argv[1]);
    return 2;
  }
  XSetInputFocus(d, w, RevertToPointerRoot, CurrentTime);
  XSync(d, False);
  sleep_ms(std::atol(argv[2]));
  for (int k = 3; k < argc; ++k) {
    std::string key = argv[k];
    long gap = 200;
    if (const auto colon = key.find(':'); colon != std::string::npos) {
      gap = std::atol(key.c_str() + colon + 1);
      key.resize(colon);
    }
    const KeySym sym = XStringToKeysym(key.c_str());
    const unsigned code = sym == NoSymbol ? 0 : XKeysymToKeycode(d, sym);
    if (!code) {
      std::fprintf(stderr, "unknown key '%s'\n", key.c_str());
      return 2;
    }
    fake(d, code, True, 0);
    fake(d, code, False, 0);  // released at once: a clicker's tap
    XFlush(d);
    sleep_ms(gap);
  }
  sleep_ms(1500);
  // Closed as a window manager closes it: the app ends its run and prints its stats.
  XEvent close{};
  close.xclient.type = ClientMessage;
  close.xclient.window = w;
  close.xclient.message_type = XInternAtom(d, "WM_PROTOCOLS", False);
  close.xclient.format = 32;
  close.xclient.data.l[0] = static_cast<long>(XInternAtom(d, "WM_DELETE_WINDOW", False));
  close.xclient.data.l[1] = CurrentTime;
  XSendEvent(d, w, False, NoEventMask, &close);
  XFlush(d);
  XCloseDisplay(d);
  return 0;
}
