void E_16(void* const* bufs, const int* vars, int core_id, int num_cores) {
  float* restrict data0 = (float*)bufs[0];
  float* restrict data1 = (float*)bufs[1];
  float* restrict data2 = (float*)bufs[2];
  for (int ridx0 = 0; ridx0 < 16; ridx0++) {
    float val0 = *(data1+ridx0);
    float val1 = *(data2+ridx0);
    *(data0+ridx0) = (val0+val1);
  }
}
