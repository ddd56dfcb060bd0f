// The CUDA backend of the engine (library dloop_cuda, built when DLOOP_HAVE_CUDA): a Model's
// weights uploaded once to the first GPU and forwarders that run the decoder's passes there
// (cuBLAS for the matrix products, kernels/cuda for the rest). Linking dloop_cuda registers the
// backend with device.h, so Engine options and the CLI reach it through open_device_model();
// tests may call open_cuda_model() directly. No CUDA headers here.
// Thread-safety: as DeviceModel (device.h).
#pragma once

#include <memory>

#include "dloop/base/status.h"
#include "dloop/engine/device.h"
#include "dloop/engine/model.h"

namespace dloop::engine::cuda {

// Errors: unavailable "no CUDA device found" without a GPU or driver; resource_exhausted when the
// weights do not fit; invalid_argument for a shape the kernels do not support (head_dim > 128).
base::Result<std::unique_ptr<DeviceModel>> open_cuda_model(const Model& model);

// GPUs the driver reports; 0 without a driver or device (never an error).
int cuda_device_count();

}  // namespace dloop::engine::cuda
