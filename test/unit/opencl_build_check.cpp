// opencl-build-check FILE.cl: builds FILE.cl for the first OpenCL device as
// the runtime does (same options as generated kernels); exit 0 when it
// builds, else the build log on stderr and exit 1. The rewriter's unit tests
// run it as a child process: a process that links Clang/LLVM 19 must not
// load an OpenCL implementation built on another LLVM (PoCL's), whose
// symbols would clash.

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: opencl-build-check FILE.cl\n");
    return 2;
  }
  std::ifstream in(argv[1]);
  std::ostringstream text;
  text << in.rdbuf();
  const std::string source = text.str();
  if (!in || source.empty()) {
    std::fprintf(stderr, "opencl-build-check: cannot read %s\n", argv[1]);
    return 2;
  }
  cl_platform_id platform;
  cl_uint count = 0;
  cl_device_id device;
  if (clGetPlatformIDs(1, &platform, &count) != CL_SUCCESS || count == 0 ||
      clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, &count) !=
          CL_SUCCESS) {
    std::fprintf(stderr, "opencl-build-check: no OpenCL device\n");
    return 2;
  }
  cl_int error = CL_SUCCESS;
  cl_context context =
      clCreateContext(nullptr, 1, &device, nullptr, nullptr, &error);
  const char *chars = source.c_str();
  const size_t length = source.size();
  cl_program program =
      clCreateProgramWithSource(context, 1, &chars, &length, &error);
  int status = 0;
  if (clBuildProgram(program, 1, &device,
                     "-cl-fp32-correctly-rounded-divide-sqrt", nullptr,
                     nullptr) != CL_SUCCESS) {
    size_t size = 0;
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr,
                          &size);
    std::string log(size, '\0');
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size,
                          log.data(), nullptr);
    std::fprintf(stderr, "%s\n", log.c_str());
    status = 1;
  }
  clReleaseProgram(program);
  clReleaseContext(context);
  return status;
}
