typedef float float4 __attribute__((aligned(4),vector_size(16)));
void r_8_2_2_4_4(void* const* bufs, const int* vars, int core_id, int num_cores) {
  float* restrict data0 = (float*)bufs[0];
  float* restrict data1 = (float*)bufs[1];
  float* restrict data2 = (float*)bufs[2];
  float acc0[1];
  float acc1[1];
  float acc2[1];
  float acc3[1];
  for (int ridx0 = 0; ridx0 < 8; ridx0++) {
    int alu0 = (ridx0*8);
    for (int ridx1 = 0; ridx1 < 2; ridx1++) {
      int alu1 = (ridx1*4);
      acc0[0] = 0.0f;
      acc1[0] = 0.0f;
      acc2[0] = 0.0f;
      acc3[0] = 0.0f;
      for (int ridx1002 = 0; ridx1002 < 2; ridx1002++) {
        float4 val0 = *((float4*)(data1+((ridx1002*4)+alu0)));
        int alu2 = (alu1+(ridx1002*32));
        float4 val1 = *((float4*)(data2+alu2));
        float4 val2 = *((float4*)(data2+(alu2+8)));
        float4 val3 = *((float4*)(data2+(alu2+16)));
        float4 val4 = *((float4*)(data2+(alu2+24)));
        acc0[0] = (acc0[0]+((((val0[0]*val1[0])+(val0[1]*val2[0]))+(val0[2]*val3[0]))+(val0[3]*val4[0])));
        acc1[0] = (acc1[0]+((((val0[0]*val1[1])+(val0[1]*val2[1]))+(val0[2]*val3[1]))+(val0[3]*val4[1])));
        acc2[0] = (acc2[0]+((((val0[0]*val1[2])+(val0[1]*val2[2]))+(val0[2]*val3[2]))+(val0[3]*val4[2])));
        acc3[0] = (acc3[0]+((((val0[0]*val1[3])+(val0[1]*val2[3]))+(val0[2]*val3[3]))+(val0[3]*val4[3])));
      }
      *((float4*)(data0+(alu1+alu0))) = (float4){acc0[0],acc1[0],acc2[0],acc3[0]};
    }
  }
}
